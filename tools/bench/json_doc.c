/* The JSON document of accel-bench --json. */
#include "json.h"
#include "report.h"

static void write_result(struct json_writer *w, const struct bench_report *report,
                         const struct bench_result *r)
{
    double ratio;

    json_begin_object(w, NULL);
    json_string(w, "case", r->case_name);
    json_string(w, "variant", r->variant);
    json_uint(w, "bytes", r->bytes);
    json_string(w, "impl", r->impl);
    json_string(w, "detail", r->detail);
    json_double(w, "median", r->summary.median);
    json_double(w, "p10", r->summary.p10);
    json_double(w, "p90", r->summary.p90);
    json_string(w, "unit", r->unit);
    json_uint(w, "runs", r->summary.runs);
    if (bench_report_ratio(report, r, &ratio))
        json_double(w, "accel_ratio", ratio);
    else
        json_null(w, "accel_ratio");
    json_end_object(w);
}

void bench_write_json(const struct bench_report *report, FILE *out)
{
    const struct bench_machine *m = &report->machine;
    struct json_writer w;

    json_writer_init(&w, out);
    json_begin_object(&w, NULL);
    json_string(&w, "tool", "accel-bench");
    json_bool(&w, "quick", m->quick);
    json_begin_object(&w, "device");
    json_string(&w, "plugin", m->plugin);
    json_uint(&w, "index", m->device_index);
    json_string(&w, "name", m->device_name);
    json_string(&w, "arch", m->arch);
    json_end_object(&w);
    json_uint(&w, "cpus", m->cpus);
    json_begin_array(&w, "results");
    for (size_t i = 0; i < report->count; i++)
        write_result(&w, report, &report->results[i]);
    json_end_array(&w);
    json_begin_array(&w, "notes");
    for (size_t i = 0; i < report->note_count; i++)
        json_string(&w, NULL, report->notes[i]);
    json_end_array(&w);
    json_end_object(&w);
    json_writer_finish(&w);
}
