/*
 * The conformance reports: lines for a person, TAP version 13 for test
 * harnesses, JUnit XML for CI systems. Each says, for a skip, why.
 */
#include <stdio.h>
#include <string.h>

#include "conformance.h"

static const char *outcome_word(enum conf_outcome outcome)
{
    switch (outcome) {
    case CONF_PASS:
        return "PASS";
    case CONF_FAIL:
        return "FAIL";
    case CONF_SKIP:
        return "SKIP";
    }
    return "?";
}

void conf_report_human_line(FILE *out, const struct conf_result *r)
{
    fprintf(out, "%s  %-10s %s (%.2f s)%s%s\n", outcome_word(r->outcome),
            r->group, r->name, r->seconds,
            r->message[0] != '\0' ? "\n      " : "", r->message);
    fflush(out);
}

void conf_report_human_totals(FILE *out, const struct conf_result *results,
                              size_t count)
{
    size_t tally[3] = {0, 0, 0};

    for (size_t i = 0; i < count; i++)
        tally[results[i].outcome]++;
    fprintf(out, "\n%zu tests: %zu passed, %zu failed, %zu skipped\n", count,
            tally[CONF_PASS], tally[CONF_FAIL], tally[CONF_SKIP]);
}

void conf_report_tap_plan(FILE *out, size_t planned)
{
    fprintf(out, "TAP version 13\n1..%zu\n", planned);
    fflush(out);
}

/* A message as one YAML double-quoted scalar. */
static void yaml_string(FILE *out, const char *text)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)text; *p != '\0'; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(out, "\\x%02x", *p);
        else
            fputc(*p, out);
    }
    fputc('"', out);
}

/* A skip reason on the test line: '#' would start another directive. */
static void tap_directive_text(FILE *out, const char *text)
{
    for (const char *p = text; *p != '\0'; p++)
        fputc(*p == '#' || *p == '\n' ? ' ' : *p, out);
}

void conf_report_tap_line(FILE *out, size_t number, const struct conf_result *r)
{
    fprintf(out, "%s %zu - %s %s", r->outcome == CONF_FAIL ? "not ok" : "ok",
            number, r->group, r->name);
    if (r->outcome == CONF_SKIP) {
        fputs(" # SKIP ", out);
        tap_directive_text(out, r->message);
    }
    fputc('\n', out);
    if (r->outcome == CONF_FAIL) {
        fputs("  ---\n  message: ", out);
        yaml_string(out, r->message);
        fprintf(out, "\n  duration_s: %.3f\n  ...\n", r->seconds);
    }
    fflush(out);
}

static void xml_text(FILE *out, const char *text)
{
    for (const unsigned char *p = (const unsigned char *)text; *p != '\0'; p++) {
        switch (*p) {
        case '&':
            fputs("&amp;", out);
            break;
        case '<':
            fputs("&lt;", out);
            break;
        case '>':
            fputs("&gt;", out);
            break;
        case '"':
            fputs("&quot;", out);
            break;
        default:
            /* XML 1.0 has no control characters but tab and newline. */
            if (*p < 0x20 && *p != '\t' && *p != '\n')
                fputc(' ', out);
            else
                fputc(*p, out);
        }
    }
}

static void junit_case(FILE *out, const struct conf_result *r)
{
    fputs("    <testcase classname=\"", out);
    xml_text(out, r->group);
    fputs("\" name=\"", out);
    xml_text(out, r->name);
    fprintf(out, "\" time=\"%.3f\"", r->seconds);
    if (r->outcome == CONF_PASS) {
        fputs("/>\n", out);
        return;
    }
    fprintf(out, ">\n      <%s message=\"",
            r->outcome == CONF_FAIL ? "failure" : "skipped");
    xml_text(out, r->message);
    fputs("\"/>\n    </testcase>\n", out);
}

/* Results come grouped: each run of one group is a testsuite. */
static size_t junit_suite(FILE *out, const struct conf_result *results,
                          size_t count)
{
    size_t end = 0, failures = 0, skipped = 0;
    double seconds = 0;

    while (end < count && strcmp(results[end].group, results[0].group) == 0) {
        failures += results[end].outcome == CONF_FAIL;
        skipped += results[end].outcome == CONF_SKIP;
        seconds += results[end].seconds;
        end++;
    }
    fputs("  <testsuite name=\"accel-conformance ", out);
    xml_text(out, results[0].group);
    fprintf(
        out, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" time=\"%.3f\">\n",
        end, failures, skipped, seconds);
    for (size_t i = 0; i < end; i++)
        junit_case(out, &results[i]);
    fputs("  </testsuite>\n", out);
    return end;
}

bool conf_report_junit(const char *path, const struct conf_result *results,
                       size_t count)
{
    FILE *out = fopen(path, "w");

    if (out == NULL)
        return false;
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites "
          "name=\"accel-conformance\">\n",
          out);
    for (size_t done = 0; done < count;)
        done += junit_suite(out, results + done, count - done);
    fputs("</testsuites>\n", out);
    return fclose(out) == 0;
}
