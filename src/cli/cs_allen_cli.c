/* `cablesim allen FIT.json CELL.swc --catalogue NAME.so [options]`: a model file for one Allen
 * Cell Types cell (an "allen" population, docs/model-format.md#allen-cells) driven by a current
 * step at the soma, with a spike detector and a probe of the soma's v (and cai), written to
 * stdout or -o FILE; run it with `cablesim run`. The fit file is checked here (the catalogue
 * loaded, the importer run), so a malformed one fails now, in one line. */
#define _DEFAULT_SOURCE /* realpath, open_memstream */
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cablesim.h"
#include "cs_allen_cli.h"

static void usage(FILE *f) {
    fprintf(f,
            "Usage: cablesim allen FIT.json CELL.swc --catalogue NAME.so [options]\n"
            "  writes a model of one Allen Cell Types cell (its *_fit.json and SWC morphology, the\n"
            "  axon replaced by two 30 um stubs) with a current step at the soma; run it with\n"
            "  'cablesim run'. NAME.so: the cell's channels, from 'cablesim build-catalogue'.\n"
            "  --processing P     aibs_perisomatic (default) or aibs_allactive\n"
            "  --amplitude NA     step amplitude [nA] (default 0.2)\n"
            "  --delay MS         step start [ms] (default 100)\n"
            "  --duration MS      step duration [ms] (default 800)\n"
            "  --tfinal MS        run length [ms] (default 1000)\n"
            "  --dt MS            time step [ms] (default 0.025)\n"
            "  --dl UM            bmtk's discretisation, 1 + 2*floor(L/(2 dl)) CVs per section [um] (default 20)\n"
            "  -o FILE            write the model there (default: stdout)\n");
}

static int number(const char *opt, const char *s, int positive, double *out) {
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !isfinite(v) || (positive && v <= 0)) {
        fprintf(stderr, "cablesim: error: allen: %s: expected a finite number%s, got '%s'\n", opt,
                positive ? " > 0" : "", s);
        return -1;
    }
    *out = v;
    return 0;
}

/* s as a JSON string body (paths: backslashes and quotes escaped) */
static void json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; ++s) {
        if (*s == '"' || *s == '\\') fputc('\\', f);
        if ((unsigned char)*s >= 0x20) fputc(*s, f);
    }
    fputc('"', f);
}

static void write_model(FILE *f, char *const path[3], const char *proc, const double v[6]) {
    fprintf(f, "{\n  \"description\": \"an Allen Cell Types cell with a current step (cablesim allen)\",\n");
    fprintf(f, "  \"catalogues\": [");
    json_str(f, path[2]);
    fprintf(f, "],\n  \"run\": {\"tfinal\": %.15g, \"dt\": %.15g},\n", v[3], v[4]);
    fprintf(f, "  \"discretization\": {\"bmtk_dl\": %.15g},\n", v[5]);
    fprintf(f, "  \"populations\": [{\n    \"name\": \"cell\", \"count\": 1,\n    \"allen\": {\"fit\": ");
    json_str(f, path[0]);
    fprintf(f, ", \"morphology\": ");
    json_str(f, path[1]);
    fprintf(f, ", \"processing\": \"%s\"},\n", proc);
    fprintf(f, "    \"stimuli\": [{\"mechanism\": \"iclamp\", \"location\": {\"branch\": 0, \"pos\": 0.5}, \"cells\": \"all\",\n"
               "                 \"params\": {\"delay\": %.15g, \"duration\": %.15g, \"amplitude\": %.15g}}],\n",
            v[1], v[2], v[0]);
    fprintf(f, "    \"detector\": {\"location\": {\"branch\": 0, \"pos\": 0.5}, \"threshold\": -10.0},\n"
               "    \"probes\": {\"cells\": \"all\", \"locations\": [{\"branch\": 0, \"pos\": 0.5}], \"interval\": 0.1}\n"
               "  }]\n}\n");
}

int cs_allen_cli_main(int argc, char **argv) {
    static const struct option opts[] = {
        {"catalogue", required_argument, 0, 'c'}, {"processing", required_argument, 0, 'p'},
        {"amplitude", required_argument, 0, 'a'}, {"delay", required_argument, 0, 'D'},
        {"duration", required_argument, 0, 'u'},  {"tfinal", required_argument, 0, 'T'},
        {"dt", required_argument, 0, 'd'},        {"dl", required_argument, 0, 'l'},
        {"help", no_argument, 0, 'h'},            {0, 0, 0, 0}};
    const char *cat = NULL, *proc = "aibs_perisomatic", *out = NULL;
    double v[6] = {0.2, 100.0, 800.0, 1000.0, 0.025, 20.0}; /* [nA], [ms] x4, [µm] */
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'c': cat = optarg; break;
        case 'p': proc = optarg; break;
        case 'o': out = optarg; break;
        case 'a': if (number("--amplitude", optarg, 0, &v[0])) return 2; break;
        case 'D': if (number("--delay", optarg, 0, &v[1]) || v[1] < 0) return 2; break;
        case 'u': if (number("--duration", optarg, 1, &v[2])) return 2; break;
        case 'T': if (number("--tfinal", optarg, 1, &v[3])) return 2; break;
        case 'd': if (number("--dt", optarg, 1, &v[4])) return 2; break;
        case 'l': if (number("--dl", optarg, 1, &v[5])) return 2; break;
        case 'h': usage(stdout); return 0;
        case ':':
            fprintf(stderr, "cablesim: error: allen: option '%s' needs a value (try 'cablesim allen --help')\n",
                    argv[optind - 1]);
            return 2;
        default:
            fprintf(stderr, "cablesim: error: allen: unknown option '%s' (try 'cablesim allen --help')\n",
                    argv[optind - 1]);
            return 2;
        }
    }
    if (optind != argc - 2 || !cat) {
        fprintf(stderr, "cablesim: error: allen: needs FIT.json, CELL.swc and --catalogue NAME.so "
                        "(try 'cablesim allen --help')\n");
        return 2;
    }
    char *path[3] = {realpath(argv[optind], NULL), realpath(argv[optind + 1], NULL), realpath(cat, NULL)};
    const char *given[3] = {argv[optind], argv[optind + 1], cat};
    for (int k = 0; k < 3; ++k)
        if (!path[k]) {
            fprintf(stderr, "cablesim: error: %s: no such file\n", given[k]);
            free(path[0]); free(path[1]); free(path[2]);
            return 1;
        }
    /* the model as it will be run: checked now (catalogue, fit file, SWC), in one line on failure */
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    int rc = 0;
    if (!mem) rc = 1;
    else {
        write_model(mem, path, proc, v);
        fclose(mem);
        cs_simulation_options o;
        cs_simulation_options_init(&o);
        o.output_path = NULL;
        o.progress = 0;
        cs_simulation *sim = NULL;
        if (cs_simulation_create_json(text, "cablesim allen", "/", &o, &sim) != CS_API_OK) {
            fprintf(stderr, "cablesim: error: %s\n", cs_api_last_error());
            rc = 1;
        }
        cs_simulation_free(sim);
    }
    if (rc == 0) {
        FILE *f = out ? fopen(out, "w") : stdout;
        if (!f || fputs(text, f) < 0 || (out && fclose(f))) {
            fprintf(stderr, "cablesim: error: %s: cannot write the model\n", out ? out : "stdout");
            rc = 1;
        }
    }
    free(text);
    free(path[0]); free(path[1]); free(path[2]);
    return rc;
}
