/* The cablesim command line, a client of the public C API (cablesim.h), as the Python package
 * is. Every failure ends with one line on stderr and a non-zero exit. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cablesim.h"
#include "cs_allen_cli.h"
#include "cs_catalogue_build.h"
#include "cs_huge_pages.h"

#define DEFAULT_OUTPUT "cablesim-out.h5"

static void usage(FILE *f) {
    fprintf(f,
        "cablesim %s: networks of multi-compartment neurons (HH cable model, spiking network).\n"
        "\n"
        "Usage:\n"
        "  cablesim                       run the built-in example: a ring of 256 cells with\n"
        "                                 branched dendrites, 100 ms; writes " DEFAULT_OUTPUT "\n"
        "  cablesim run MODEL.json [options]\n"
        "  cablesim run simulation_config.json [options]\n"
        "                                 a SONATA circuit (bmtk's networks): output where the\n"
        "                                 config says unless -o; docs/sonata-input.md\n"
        "  cablesim build-catalogue DIR -o NAME.so [--cuda auto|on|off]\n"
        "                                 compile every .mod file in DIR (NMODL) into one catalogue\n"
        "                                 of mechanisms; a model loads it with \"catalogues\"\n"
        "  cablesim allen FIT.json CELL.swc --catalogue NAME.so [-o MODEL.json]\n"
        "                                 a model of one Allen Cell Types cell with a current step\n"
        "                                 (cablesim allen --help)\n"
        "  cablesim --help | --version\n"
        "\n"
        "Options for run:\n"
        "  -o, --output FILE   HDF5 output (SONATA spikes + voltage report + metadata + profile);\n"
        "                      default " DEFAULT_OUTPUT "\n"
        "                      (an existing FILE is overwritten, unless --no-clobber)\n"
        "      --no-clobber    refuse to run (exit 1) when the output file already exists\n"
        "      --no-output     write no file (summary and profile only)\n"
        "  -t, --threads N     OpenMP threads (default: the model's, else all cores)\n"
        "      --tfinal MS     simulated time [ms], overrides the model's run.tfinal\n"
        "      --dt MS         time step [ms], overrides the model's run.dt\n"
        "      --backend NAME  cpu (default), cuda, or auto (the GPU when there is one)\n"
        "      --solver NAME   the GPU's Hines solver: auto (default), flat, interleaved,\n"
        "                      block_interleaved, block_shared, variable, fine, warp, staged, chunked,\n"
        "                      epoch;\n"
        "                      the per-system ones (flat, interleaved, block_interleaved, variable)\n"
        "                      fuse the assembly into the solve; epoch runs a whole epoch in one\n"
        "                      kernel, a block per cell (small networks: no launch per step;\n"
        "                      built-in mechanisms only); auto times the candidates on the\n"
        "                      network for a few epochs and keeps the fastest\n"
        "      --report-precision single|double\n"
        "                      voltage report storage: float32 (SONATA's default) or float64\n"
        "      --separate-synapses\n"
        "                      keep every SONATA synapse its own instance; by default a cell's\n"
        "                      synapses of one linear type (exp2syn, expsyn) at one compartment\n"
        "                      with equal parameters share one, as Arbor's coalesce_synapses\n"
        "  -q, --quiet         no progress line, summary or profile\n"
        "\n"
        "Environment: CABLESIM_GPU_MEMORY_LIMIT=BYTES caps the GPU memory a cuda run may take.\n"
        "  CABLESIM_HUGE_PAGES=0 keeps the host's usual 4 KiB pages: by default cablesim starts\n"
        "  itself again with GLIBC_TUNABLES=glibc.malloc.hugetlb=1, so that large networks are\n"
        "  built and set up without millions of page faults (docs/performance.md).\n"
        "\n"
        "The model format is described in docs/model-format.md; examples are in models/.\n"
        "Plot traces and a spike raster with: scripts/plot_output.py OUT.h5 -o plot.png\n"
        "\n"
        "Examples:\n"
        "  cablesim run models/examples/ring.json -o ring.h5 --threads 2\n"
        "  cablesim run models/examples/ball_and_stick.json --tfinal 50 --dt 0.01\n",
        cs_api_version());
}

/* Over several MPI ranks every rank holds the same (agreed) error; rank 0 prints it. */
static int fail(const char *msg) {
    if (cs_api_rank() == 0) fprintf(stderr, "cablesim: error: %s\n", msg);
    return 1;
}

static int parse_double(const char *opt, const char *s, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v <= 0) {
        fprintf(stderr, "cablesim: error: %s: expected a finite number > 0, got '%s'\n", opt, s);
        return -1;
    }
    *out = v;
    return 0;
}

static int cli(int argc, char **argv) {
    cs_simulation_options o;
    cs_simulation_options_init(&o);
    o.output_path = DEFAULT_OUTPUT;
    int quiet = 0, no_clobber = 0, output_given = 0;
    char sonata_out[4096] = "";
    const char *model_path = NULL;

    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        usage(stdout);
        return 0;
    }
    if (argc >= 2 && !strcmp(argv[1], "--version")) {
        printf("cablesim %s\n", cs_api_version());
        return 0;
    }
    if (argc >= 2 && !strcmp(argv[1], "build-catalogue")) return cs_catalogue_build_main(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "allen")) return cs_allen_cli_main(argc - 1, argv + 1);
    if (argc >= 2) {
        if (strcmp(argv[1], "run")) {
            fprintf(stderr, "cablesim: error: unknown command '%s' (try 'cablesim --help')\n", argv[1]);
            return 2;
        }
        static const struct option opts[] = {
            {"output", required_argument, 0, 'o'}, {"no-output", no_argument, 0, 'n'},
            {"threads", required_argument, 0, 't'}, {"tfinal", required_argument, 0, 'T'},
            {"dt", required_argument, 0, 'd'},      {"backend", required_argument, 0, 'b'},
            {"solver", required_argument, 0, 's'},  {"report-precision", required_argument, 0, 'P'},
            {"quiet", no_argument, 0, 'q'},         {"help", no_argument, 0, 'h'},
            {"no-clobber", no_argument, 0, 'N'},   {"separate-synapses", no_argument, 0, 'S'},
            {0, 0, 0, 0}};
        optind = 2;
        opterr = 0;
        int c;
        while ((c = getopt_long(argc, argv, ":o:t:qh", opts, NULL)) != -1) {
            switch (c) {
            case 'o': o.output_path = optarg; output_given = 1; break;
            case 'n': o.output_path = NULL; output_given = 1; break;
            case 't': {
                char *end;
                long n = strtol(optarg, &end, 10);
                if (*end || end == optarg || n < 1 || n > 4096) {
                    fprintf(stderr, "cablesim: error: --threads: expected an integer in [1, 4096], got '%s'\n", optarg);
                    return 2;
                }
                o.threads = (int)n;
                break;
            }
            case 'T': if (parse_double("--tfinal", optarg, &o.tfinal)) return 2; break;
            case 'd': if (parse_double("--dt", optarg, &o.dt)) return 2; break;
            case 'b': o.backend = optarg; break;
            case 's': o.solver = optarg; break;
            case 'P':
                if (strcmp(optarg, "single") && strcmp(optarg, "double")) {
                    fprintf(stderr, "cablesim: error: --report-precision: expected single or double, got '%s'\n", optarg);
                    return 2;
                }
                o.report_bits = strcmp(optarg, "double") ? 32 : 64;
                break;
            case 'q': quiet = 1; break;
            case 'N': no_clobber = 1; break;
            case 'S': o.separate_synapses = 1; break;
            case 'h': usage(stdout); return 0;
            case ':':
                fprintf(stderr, "cablesim: error: option '%s' needs a value (try 'cablesim --help')\n", argv[optind - 1]);
                return 2;
            default:
                fprintf(stderr, "cablesim: error: unknown option '%s' (try 'cablesim --help')\n", argv[optind - 1]);
                return 2;
            }
        }
        if (optind != argc - 1) {
            fprintf(stderr, "cablesim: error: 'run' needs exactly one MODEL.json (try 'cablesim --help')\n");
            return 2;
        }
        model_path = argv[optind];
    }
    /* a SONATA config writes where it says (output_dir/spikes_file) unless -o says otherwise */
    if (model_path && !output_given) {
        if (cs_model_output_path(model_path, sonata_out, sizeof sonata_out) != CS_API_OK) return fail(cs_api_last_error());
        if (sonata_out[0]) o.output_path = sonata_out;
    }
    o.progress = !quiet;
    struct stat existing;
    if (no_clobber && o.output_path && stat(o.output_path, &existing) == 0) {
        fprintf(stderr, "cablesim: error: %s: output file exists; not overwritten (--no-clobber)\n",
                o.output_path);
        return 1;
    }

    cs_simulation *sim = NULL;
    cs_simulation_info info = {.size = sizeof info};
    /* model_path NULL: the built-in model */
    if (cs_simulation_create_file(model_path, &o, &sim) != CS_API_OK) return fail(cs_api_last_error());
    if (cs_simulation_get_info(sim, &info) != CS_API_OK || cs_simulation_run(sim, info.tfinal) != CS_API_OK) {
        int rc = fail(cs_api_last_error());
        cs_simulation_free(sim);
        return rc;
    }
    if (!quiet && cs_api_rank() == 0) cs_simulation_print_summary(sim, stdout);
    cs_simulation_free(sim);
    return 0;
}

int main(int argc, char **argv) {
    cs_cli_huge_pages(argv); /* large arrays in huge pages: may start this program again, once */
    /* under mpirun: one rank of a distributed run (docs/mpi.md); alone: a single process */
    if (cs_api_init(&argc, &argv) != CS_API_OK) return fail(cs_api_last_error());
    int rc = cli(argc, argv);
    cs_api_finalize();
    return rc;
}
