/*
 * accel-bench's own logic: the percentiles, the JSON and SVG it writes, the
 * table's ratios, and that a quick run finishes with a well-formed report.
 * No test here asserts a speed: figures depend on the machine.
 *
 * The documents are checked with python3's json and xml parsers (meson
 * runs on python3, so it is there wherever the tests build).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support.h"

#include "json.h"
#include "report.h"
#include "stats.h"

/* ---- helpers ---- */

/* Run argv with stdout into `out_path` (NULL: /dev/null); its exit status. */
static int run_program(char *const argv[], const char *out_path)
{
    pid_t pid = fork();
    int status = 0;

    assert_true(pid >= 0);
    if (pid == 0) {
        if (freopen(out_path != NULL ? out_path : "/dev/null", "w", stdout) ==
            NULL)
            _exit(126);
        execv(argv[0], argv);
        _exit(127);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Run a python3 check on a file: the script sees it as sys.argv[1]. */
static void assert_python(const char *script, const char *path)
{
    char *argv[] = {PYTHON3_PATH, "-c", (char *)script, (char *)path, NULL};

    assert_int_equal(run_program(argv, NULL), 0);
}

/* The same, with one more argument for the script. */
static void assert_python_args(const char *script, const char *path,
                               const char *arg)
{
    char *argv[] = {PYTHON3_PATH, "-c",        (char *)script,
                    (char *)path, (char *)arg, NULL};

    assert_int_equal(run_program(argv, NULL), 0);
}

static struct bench_samples samples_of(const double *values, size_t count)
{
    struct bench_samples s;

    assert_true(bench_samples_init(&s, count));
    for (size_t i = 0; i < count; i++)
        assert_true(bench_samples_add(&s, values[i]));
    return s;
}

static struct bench_result result(const char *case_name, const char *variant,
                                  uint64_t bytes, const char *impl,
                                  const char *unit, double median)
{
    struct bench_result r = {0};

    snprintf(r.case_name, sizeof(r.case_name), "%s", case_name);
    snprintf(r.variant, sizeof(r.variant), "%s", variant);
    r.bytes = bytes;
    snprintf(r.impl, sizeof(r.impl), "%s", impl);
    snprintf(r.detail, sizeof(r.detail), "how %s did it", impl);
    snprintf(r.unit, sizeof(r.unit), "%s", unit);
    r.summary = (struct bench_summary){median, median * 0.9, median * 1.1, 7};
    return r;
}

/* A report with a little of everything, a hostile device name included. */
static void fill_report(struct bench_report *report)
{
    static const uint64_t sizes[] = {4096, 65536, 1048576};

    bench_report_init(report);
    snprintf(report->machine.plugin, sizeof(report->machine.plugin), "null");
    snprintf(report->machine.device_name, sizeof(report->machine.device_name),
             "a \"quoted\" <device> & co\n\x01\xff");
    snprintf(report->machine.arch, sizeof(report->machine.arch), "x86_64");
    report->machine.cpus = 2;
    {
        struct bench_result a = result("launch_empty", "", 0, "accel",
                                       BENCH_UNIT_NS, 500.0);
        struct bench_result o = result("launch_empty", "", 0, "opencl",
                                       BENCH_UNIT_NS, 50000.0);

        assert_true(bench_report_add(report, &a));
        assert_true(bench_report_add(report, &o));
    }
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        static const char *const variants[] = {"pageable", "pinned"};

        for (size_t v = 0; v < 2; v++) {
            struct bench_result a = result("copy_h2d", variants[v], sizes[i],
                                           "accel", BENCH_UNIT_GBPS,
                                           2.0 + (double)i);
            struct bench_result c = result("copy_h2d", variants[v], sizes[i],
                                           "c", BENCH_UNIT_GBPS, 4.0 + (double)i);

            assert_true(bench_report_add(report, &a));
            assert_true(bench_report_add(report, &c));
        }
    }
    assert_true(
        bench_report_note(report, "opencl: a note with \"quotes\" and a\ttab"));
}

/* ---- statistics ---- */

static void test_percentile_interpolates_between_ranks(void **state)
{
    static const double sorted[] = {1.0, 2.0, 3.0, 4.0};

    (void)state;
    assert_float_equal(bench_percentile(sorted, 4, 50.0), 2.5, 1e-12);
    assert_float_equal(bench_percentile(sorted, 4, 10.0), 1.3, 1e-12);
    assert_float_equal(bench_percentile(sorted, 4, 90.0), 3.7, 1e-12);
    assert_float_equal(bench_percentile(sorted, 4, 0.0), 1.0, 1e-12);
    assert_float_equal(bench_percentile(sorted, 4, 100.0), 4.0, 1e-12);
    assert_float_equal(bench_percentile(sorted, 1, 90.0), 1.0, 1e-12);
    assert_float_equal(bench_percentile(sorted, 0, 50.0), 0.0, 1e-12);
}

static void test_summary_sorts_a_copy_and_counts_runs(void **state)
{
    static const double values[] = {5.0, 1.0, 4.0, 2.0, 3.0};
    struct bench_samples s = samples_of(values, 5);
    struct bench_summary summary;

    (void)state;
    assert_true(bench_summarize(&s, &summary));
    assert_float_equal(summary.median, 3.0, 1e-12);
    assert_float_equal(summary.p10, 1.4, 1e-12);
    assert_float_equal(summary.p90, 4.6, 1e-12);
    assert_int_equal(summary.runs, 5);
    /* The samples keep the order they were taken in. */
    assert_float_equal(s.values[0], 5.0, 0.0);
    assert_float_equal(s.values[4], 3.0, 0.0);
    bench_samples_deinit(&s);
}

static void test_summary_of_no_samples_is_zero(void **state)
{
    struct bench_samples s;
    struct bench_summary summary;

    (void)state;
    assert_true(bench_samples_init(&s, 0));
    assert_true(bench_summarize(&s, &summary));
    assert_int_equal(summary.runs, 0);
    assert_float_equal(summary.median, 0.0, 0.0);
    assert_false(bench_samples_add(&s, 1.0));
    bench_samples_deinit(&s);
}

struct counting_step {
    unsigned calls;
    unsigned fail_at; /* 0: never */
};

static bool count_step(void *context, double *out_ns)
{
    struct counting_step *c = context;

    c->calls++;
    *out_ns = (double)c->calls;
    return c->fail_at == 0 || c->calls < c->fail_at;
}

static void test_sample_warms_up_then_keeps_to_the_budget(void **state)
{
    struct bench_budget many = {
        .warmup = 2, .min_runs = 3, .max_runs = 7, .max_ns = UINT64_MAX};
    struct bench_budget timed_out = {
        .warmup = 1, .min_runs = 3, .max_runs = 7, .max_ns = 0};
    struct counting_step c = {0};
    struct bench_samples s;

    (void)state;
    assert_true(bench_sample(&many, count_step, &c, &s));
    assert_int_equal(c.calls, 9);
    assert_int_equal(s.count, 7);
    /* The warm-up runs are not counted. */
    assert_float_equal(s.values[0], 3.0, 0.0);
    bench_samples_deinit(&s);

    c = (struct counting_step){0};
    assert_true(bench_sample(&timed_out, count_step, &c, &s));
    assert_int_equal(s.count, 3);
    bench_samples_deinit(&s);
}

static void test_sample_stops_at_a_failing_step(void **state)
{
    struct bench_budget budget = {
        .warmup = 1, .min_runs = 5, .max_runs = 10, .max_ns = 0};
    struct counting_step c = {.fail_at = 3};
    struct bench_samples s;

    (void)state;
    assert_false(bench_sample(&budget, count_step, &c, &s));
    assert_int_equal(c.calls, 3);
    bench_samples_deinit(&s);
}

/* ---- output ---- */

static char *capture(void (*write)(FILE *, const void *), const void *arg)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);

    assert_non_null(out);
    write(out, arg);
    assert_int_equal(fclose(out), 0);
    return text;
}

static void write_string(FILE *out, const void *arg)
{
    struct json_writer w;

    json_writer_init(&w, out);
    json_string(&w, NULL, arg);
}

static void test_json_string_escapes_quotes_controls_and_bad_utf8(void **state)
{
    char *text;

    (void)state;
    text = capture(write_string, "a\"b\\c\n\x01\x7f é \xff\xc3");
    assert_string_equal(text,
                        "\"a\\\"b\\\\c\\n\\u0001\\u007f é \\ufffd\\ufffd\"");
    free(text);
    /* An overlong encoding and a surrogate are not UTF-8 either. */
    text = capture(write_string, "\xc0\xaf\xed\xa0\x80");
    assert_string_equal(text, "\"\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\"");
    free(text);
}

static void write_table(FILE *out, const void *arg)
{
    bench_write_table(arg, out);
}

static void test_table_shows_accel_first_with_ratios(void **state)
{
    struct bench_report report;
    char *text;

    (void)state;
    fill_report(&report);
    text = capture(write_table, &report);
    /* 500 ns against 50 µs; 2 GB/s against 4 GB/s. */
    assert_contains(text, " 0.01 ");
    assert_contains(text, " 0.5 ");
    assert_contains(text, "50.00 µs");
    assert_contains(text, "note: opencl: a note");
    assert_true(strstr(text, "accel ") < strstr(text, "opencl "));
    free(text);
    bench_report_deinit(&report);
}

static void test_ratio_needs_accel_in_the_same_group(void **state)
{
    struct bench_report report;
    struct bench_result lonely = result("copy_d2d", "", 4096, "c",
                                        BENCH_UNIT_GBPS, 1.0);
    double ratio;

    (void)state;
    fill_report(&report);
    assert_true(bench_report_add(&report, &lonely));
    assert_false(
        bench_report_ratio(&report, &report.results[report.count - 1], &ratio));
    assert_false(bench_report_ratio(&report, &report.results[0], &ratio));
    assert_true(bench_report_ratio(&report, &report.results[1], &ratio));
    assert_float_equal(ratio, 0.01, 1e-12);
    bench_report_deinit(&report);
}

static void test_format_scales_units(void **state)
{
    char text[32];

    (void)state;
    bench_format_value(850.0, BENCH_UNIT_NS, text, sizeof(text));
    assert_string_equal(text, "850.0 ns");
    bench_format_value(1210.0, BENCH_UNIT_NS, text, sizeof(text));
    assert_string_equal(text, "1.21 µs");
    bench_format_value(-2.5e6, BENCH_UNIT_NS, text, sizeof(text));
    assert_string_equal(text, "-2.50 ms");
    bench_format_value(9.871, BENCH_UNIT_GBPS, text, sizeof(text));
    assert_string_equal(text, "9.87 GB/s");
    bench_format_bytes(4096, text, sizeof(text));
    assert_string_equal(text, "4 KiB");
    bench_format_bytes(256ull << 20, text, sizeof(text));
    assert_string_equal(text, "256 MiB");
    bench_format_bytes(1000, text, sizeof(text));
    assert_string_equal(text, "1000 B");
}

static const char json_shape_check[] =
    "import json, sys\n"
    "doc = json.load(open(sys.argv[1], encoding='utf-8'))\n"
    "assert doc['tool'] == 'accel-bench'\n"
    "assert isinstance(doc['device']['name'], str) and 'quoted' in "
    "doc['device']['name']\n"
    "assert isinstance(doc['notes'], list) and '\"quotes\"' in "
    "doc['notes'][0]\n"
    "keys = {'case', 'variant', 'bytes', 'impl', 'detail', 'median', 'p10', "
    "'p90',\n"
    "        'unit', 'runs', 'accel_ratio'}\n"
    "assert len(doc['results']) == 14\n"
    "for r in doc['results']:\n"
    "    assert set(r) == keys, r\n"
    "    assert r['p10'] <= r['median'] <= r['p90'] and r['runs'] == 7\n"
    "    assert r['unit'] in ('ns', 'GB/s')\n"
    "    assert (r['accel_ratio'] is None) == (r['impl'] == 'accel')\n";

static void test_json_document_parses_with_every_field(void **state)
{
    struct bench_report report;
    char *dir = support_make_temp_dir(),
         *path = support_path_in(dir, "report.json");
    FILE *out = fopen(path, "w");

    (void)state;
    assert_non_null(out);
    fill_report(&report);
    bench_write_json(&report, out);
    assert_int_equal(fclose(out), 0);
    assert_python(json_shape_check, path);
    bench_report_deinit(&report);
    free(path);
    support_remove_dir(dir);
}

static const char svg_check[] =
    "import sys, xml.etree.ElementTree as ET\n"
    "root = ET.parse(sys.argv[1]).getroot()\n"
    "ns = '{http://www.w3.org/2000/svg}'\n"
    "assert root.tag == ns + 'svg', root.tag\n"
    "assert float(root.get('width')) > 0 and float(root.get('height')) > 0\n"
    "lines = [p for p in root.iter(ns + 'path') if p.get('stroke-width') == "
    "'2']\n"
    "if len(sys.argv) > 2:\n"
    "    assert len(lines) == int(sys.argv[2]), len(lines)\n"
    "    for p in lines:\n"
    "        assert p.get('d').startswith('M'), p.get('d')\n";

static void assert_svg(const char *path, int lines)
{
    char count[16];
    char *argv[] = {PYTHON3_PATH, "-c",  (char *)svg_check,
                    (char *)path, count, NULL};

    snprintf(count, sizeof(count), "%d", lines);
    if (lines < 0)
        argv[4] = NULL;
    assert_int_equal(run_program(argv, NULL), 0);
}

static void test_svg_is_well_formed_with_a_line_per_series(void **state)
{
    struct bench_report report, empty;
    char *dir = support_make_temp_dir(),
         *path = support_path_in(dir, "plot.svg");
    FILE *out = fopen(path, "w");

    (void)state;
    assert_non_null(out);
    fill_report(&report);
    bench_write_svg(&report, out);
    assert_int_equal(fclose(out), 0);
    /* accel and c, pageable and pinned: four lines. */
    assert_svg(path, 4);

    bench_report_init(&empty);
    out = fopen(path, "w");
    assert_non_null(out);
    bench_write_svg(&empty, out);
    assert_int_equal(fclose(out), 0);
    assert_svg(path, 0);
    bench_report_deinit(&empty);
    bench_report_deinit(&report);
    free(path);
    support_remove_dir(dir);
}

/* ---- the tool ---- */

static int setup_tool_environment(void **state)
{
    (void)state;
    support_clean_environment();
    setenv("ACCEL_PLUGIN_PATH", NULL_PLUGIN_PATH, 1);
    setenv("ACCEL_BACKEND", "null", 1);
    /*
     * The hecbench programs' OpenMP versions open a target region per
     * step or per cell, which gcc runs on the host with a fresh team each
     * time; libgomp's spinning waits make one of phmm's steps take 1 to
     * 25 s on two CPUs, and seconds here are for checking results only.
     */
    setenv("OMP_WAIT_POLICY", "passive", 1);
    return 0;
}

static const char quick_alloc_check[] =
    "import json, sys\n"
    "doc = json.load(open(sys.argv[1], encoding='utf-8'))\n"
    "assert doc['quick'] is True and doc['device']['plugin'] == 'null'\n"
    "rows = doc['results']\n"
    "assert rows and all(r['case'] == 'alloc_free' for r in rows), rows\n"
    "impls = {r['impl'] for r in rows}\n"
    "assert {'accel', 'c'} <= impls, impls\n"
    "for r in rows:\n"
    "    assert r['unit'] == 'ns' and r['runs'] >= 5 and r['bytes'] > 0\n"
    "    assert 0 < r['p10'] <= r['median'] <= r['p90']\n";

static void test_quick_case_writes_json_and_svg(void **state)
{
    char *dir = support_make_temp_dir(),
         *json = support_path_in(dir, "out.json"),
         *svg = support_path_in(dir, "out.svg");
    char *argv[] = {ACCEL_BENCH_PATH, "--quick", "--case", "alloc_free",
                    "--json",         "--svg",   svg,      NULL};

    (void)state;
    assert_int_equal(run_program(argv, json), 0);
    assert_python(quick_alloc_check, json);
    /* No copy case ran: a plot that says so, still well formed. */
    assert_svg(svg, 0);
    free(svg);
    free(json);
    support_remove_dir(dir);
}

/*
 * Every workload case (the barrier kernels' too: gemm_tiled, stencil_2d
 * tiled, reduce_shared, scan_block) runs on accel, plain C (one thread and all) and,
 * where the build found OpenCL and a CPU device, OpenCL; a result is only
 * reported once its output matched the reference element by element (a
 * wrong one is a failed measurement: accel's fails the run, a baseline's
 * is noted), so each figure present here was checked.
 */
static const char workload_check[] =
    "import json, sys\n"
    "doc = json.load(open(sys.argv[1], encoding='utf-8'))\n"
    "points = {('matvec', '32x8'), ('matvec', '256x1'), ('stencil_2d', ''),\n"
    "          ('conv3d', ''), ('histogram', ''), ('stencil_2d', 'tiled'),\n"
    "          ('gemm_tiled', 'tiled'), ('gemm_tiled', 'naive'), "
    "('reduce_shared', ''),\n"
    "          ('scan_block', '')}\n"
    "rows = [r for r in doc['results'] if (r['case'], r['variant']) in "
    "points]\n"
    "notes = ' '.join(doc['notes'])\n"
    "assert ', expected ' not in notes, notes\n"
    "opencl = not any(n.startswith('opencl: not built') or "
    "n.startswith('opencl: no ')\n"
    "                 for n in doc['notes'])\n"
    "for case, variant in points:\n"
    "    mine = [r for r in rows if (r['case'], r['variant']) == (case, "
    "variant)]\n"
    "    impls = [r['impl'] for r in mine]\n"
    "    assert impls.count('accel') == 1 and impls.count('c') >= 1, (case, "
    "impls, notes)\n"
    "    assert not opencl or 'opencl' in impls, (case, impls, notes)\n"
    "    for r in mine:\n"
    "        assert r['unit'] == 'GB/s' and r['median'] > 0, r\n";

/*
 * Every program of the real-code suite (hecbench) runs through accel, its
 * OpenMP version and, where OpenCL was found, PoCL, and each result was
 * checked against the program's reference before it was reported (a
 * wrong one leaves a note naming the element and no result).
 * HECBENCH_PROGRAMS is how many the build has (none without OpenMP).
 */
static const char hecbench_check[] =
    "import json, sys\n"
    "doc = json.load(open(sys.argv[1], encoding='utf-8'))\n"
    "notes = ' '.join(doc['notes'])\n"
    "assert ', expected ' not in notes, notes\n"
    "rows = [r for r in doc['results'] if r['case'] == 'hecbench']\n"
    "programs = {r['variant'] for r in rows}\n"
    "assert len(programs) == int(sys.argv[2]), (programs, notes)\n"
    "opencl = not any(n.startswith('opencl: not built') or "
    "n.startswith('opencl: no ')\n"
    "                 for n in doc['notes'])\n"
    "for p in programs:\n"
    "    impls = sorted(r['impl'] for r in rows if r['variant'] == p)\n"
    "    want = ['accel', 'opencl', 'openmp'] if opencl else ['accel', "
    "'openmp']\n"
    "    assert impls == want, (p, impls, notes)\n"
    "    assert all(r['unit'] == 'ns' and r['median'] > 0 for r in rows), "
    "rows\n";

static const char quick_run_check[] =
    "import json, sys\n"
    "doc = json.load(open(sys.argv[1], encoding='utf-8'))\n"
    "cases = {r['case'] for r in doc['results'] if r['impl'] == 'accel'}\n"
    "want = {'discovery', 'discovery_many', 'dispatch', 'launch_empty', "
    "'launch_stream', 'vadd',\n"
    "        'copy_h2d', 'copy_d2h', 'copy_d2d', 'fill', 'alloc_free',\n"
    "        'matvec', 'stencil_2d', 'conv3d', 'histogram',\n"
    "        'gemm_tiled', 'reduce_shared', 'scan_block', 'compile'}\n"
    "assert cases - {'hecbench'} == want, (cases, doc['notes'])\n"
    "assert {r['variant'] for r in doc['results'] if r['case'] == 'compile'} "
    "== \\\n"
    "    {'cold', 'warm'}\n"
    "assert {r['variant'] for r in doc['results'] if r['case'] == 'copy_h2d'} "
    "== \\\n"
    "    {'pageable', 'pinned'}\n"
    "assert any(r['impl'] == 'plugin' for r in doc['results'])\n";

static void
test_quick_run_finishes_every_case_and_checks_each_workload_result(void **state)
{
    char *dir = support_make_temp_dir(),
         *json = support_path_in(dir, "out.json"),
         *svg = support_path_in(dir, "out.svg");
    char *argv[] = {ACCEL_BENCH_PATH, "--quick", "--json", "--svg", svg, NULL};

    (void)state;
    assert_int_equal(run_program(argv, json), 0);
    assert_python(quick_run_check, json);
    assert_python(workload_check, json);
    assert_python_args(hecbench_check, json, HECBENCH_PROGRAMS);
    assert_svg(svg, -1);
    free(svg);
    free(json);
    support_remove_dir(dir);
}

static void test_unknown_case_is_a_usage_error(void **state)
{
    char *argv[] = {ACCEL_BENCH_PATH, "--case", "nosuch", NULL};

    (void)state;
    assert_int_equal(run_program(argv, NULL), 2);
}

/* A program name that is none of the hecbench case's, with or without OpenMP. */
static void test_unknown_program_is_a_usage_error(void **state)
{
    char *argv[] = {ACCEL_BENCH_PATH, "--case", "hecbench",
                    "--program",      "nosuch", NULL};

    (void)state;
    assert_int_equal(run_program(argv, NULL), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_percentile_interpolates_between_ranks),
        cmocka_unit_test(test_summary_sorts_a_copy_and_counts_runs),
        cmocka_unit_test(test_summary_of_no_samples_is_zero),
        cmocka_unit_test(test_sample_warms_up_then_keeps_to_the_budget),
        cmocka_unit_test(test_sample_stops_at_a_failing_step),
        cmocka_unit_test(test_json_string_escapes_quotes_controls_and_bad_utf8),
        cmocka_unit_test(test_table_shows_accel_first_with_ratios),
        cmocka_unit_test(test_ratio_needs_accel_in_the_same_group),
        cmocka_unit_test(test_format_scales_units),
        cmocka_unit_test(test_json_document_parses_with_every_field),
        cmocka_unit_test(test_svg_is_well_formed_with_a_line_per_series),
        cmocka_unit_test_setup(test_quick_case_writes_json_and_svg,
                               setup_tool_environment),
        cmocka_unit_test_setup(
            test_quick_run_finishes_every_case_and_checks_each_workload_result,
            setup_tool_environment),
        cmocka_unit_test_setup(test_unknown_case_is_a_usage_error,
                               setup_tool_environment),
        cmocka_unit_test_setup(test_unknown_program_is_a_usage_error,
                               setup_tool_environment),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
