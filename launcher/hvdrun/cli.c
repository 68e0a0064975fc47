#include "cli.h"

#include <string.h>

#include "hvd_exit.h"

static const cfg_option *
lookup(const char *word, char *name, size_t size, const char **value)
{
    const cfg_option *o;
    const char *eq;

    *value = NULL;
    if (strncmp(word, "--", 2) == 0) {
        word += 2;
        if ((eq = strchr(word, '=')) != NULL) {
            snprintf(name, size, "%.*s", (int)(eq - word), word);
            *value = eq + 1;
            return cfg_option_by_long(name);
        }
        return cfg_option_by_long(word);
    }
    if ((o = cfg_option_by_short(word + 1)) != NULL)
        return o;
    return cfg_option_by_long(word + 1);
}

int
cli_parse(int argc, char **argv, cfg_values *vals, int *cmd, char *err,
          size_t errlen)
{
    int i;

    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *value;
        char name[128], pair[256];
        const cfg_option *o;
        cfg_err e;

        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-' || a[1] == '\0')
            break;
        if ((o = lookup(a, name, sizeof(name), &value)) == NULL) {
            snprintf(err, errlen, "unknown option '%s'", a);
            return -1;
        }
        if (value == NULL && o->type != CFG_T_FLAG) {
            /* a range is two words, or one "MIN,MAX" */
            int words = o->type == CFG_T_RANGE && i + 1 < argc &&
                                !strchr(argv[i + 1], ',')
                            ? 2
                            : 1;
            if (i + words >= argc) {
                snprintf(err, errlen, "option '%s' needs %s (%s)", a,
                         words == 2 ? "two values" : "a value", o->arg);
                return -1;
            }
            if (words == 2) /* horovodrun's "--range MIN MAX" */
                snprintf(pair, sizeof(pair), "%s %s", argv[i + 1], argv[i + 2]);
            value = words == 2 ? pair : argv[i + 1];
            i += words;
        }
        if (cfg_values_set(vals, o->id, value, &e) != 0) {
            snprintf(err, errlen, "option '%s': %s", a, e.msg);
            return -1;
        }
    }
    *cmd = i;
    return 0;
}

void
cli_help(FILE *f)
{
    size_t i;

    fprintf(f, "usage: hvdrun [options] [--] COMMAND [ARGS...]\n\n"
               "Runs COMMAND as a data-parallel job of -np processes on the "
               "given hosts.\n\nOptions:\n");
    for (i = 0; i < CFG_OPT_COUNT; i++) {
        const cfg_option *o = &cfg_options[i];
        char left[96];
        int n = 0;

        if (o->long_name == NULL && o->short_name == NULL)
            continue;
        if (o->short_name)
            n += snprintf(left + n, sizeof(left) - n, "-%s%s", o->short_name,
                          o->long_name ? ", " : "");
        if (o->long_name)
            n += snprintf(left + n, sizeof(left) - n, "--%s", o->long_name);
        if (o->type != CFG_T_FLAG)
            snprintf(left + n, sizeof(left) - n, " %s", o->arg);
        fprintf(f, "  %-38s %s\n", left, o->help);
    }
    fprintf(f,
            "\nExit status: the failing worker's code (128+N for signal N), "
            "0 when all\nsucceed, %d usage error, %d bad host or config file, "
            "%d launch failure,\n%d stopped by the rendezvous daemon. "
            "See hvdrun(1), hvdrun-hostfile(5), hvdd(8).\n",
            HVD_EXIT_USAGE, HVD_EXIT_CONFIG, HVD_EXIT_LAUNCH,
            HVD_EXIT_RENDEZVOUS);
}
