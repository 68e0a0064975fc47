#include "options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cfg_util.h"
#include "hvd_numbers.h"

const cfg_option cfg_options[CFG_OPT_COUNT] = {
#define CFG_OPTION_ROW(id, lng, shrt, type, key, env, xform, req, arg, help)   \
    {CFG_OPT_##id, lng, shrt, type, key, env, xform, CFG_OPT_##req, arg, help},
    CFG_OPTIONS(CFG_OPTION_ROW)
#undef CFG_OPTION_ROW
};

/* horovodrun's and mpirun's spellings that users already type. */
static const struct {
    const char *alias, *name;
} aliases[] = {
    {"prefix-output-with-timestamp", "prefix-timestamp"},
    {"host-file", "hostfile"},
    {"np", "num-proc"},
};

const cfg_option *
cfg_option_by_long(const char *name)
{
    size_t i;

    for (i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
        if (strcmp(name, aliases[i].alias) == 0)
            name = aliases[i].name;
    for (i = 0; i < CFG_OPT_COUNT; i++)
        if (cfg_options[i].long_name &&
            strcmp(cfg_options[i].long_name, name) == 0)
            return &cfg_options[i];
    return NULL;
}

const cfg_option *
cfg_option_by_short(const char *name)
{
    size_t i;

    for (i = 0; i < CFG_OPT_COUNT; i++)
        if (cfg_options[i].short_name &&
            strcmp(cfg_options[i].short_name, name) == 0)
            return &cfg_options[i];
    return NULL;
}

const cfg_option *
cfg_option_by_key(const char *key)
{
    size_t i;

    for (i = 0; i < CFG_OPT_COUNT; i++)
        if (cfg_options[i].key && strcmp(cfg_options[i].key, key) == 0)
            return &cfg_options[i];
    return NULL;
}

int
cfg_option_section_exists(const char *section)
{
    size_t i, n = strlen(section);

    for (i = 0; i < CFG_OPT_COUNT; i++) {
        const char *k = cfg_options[i].key;
        if (k && strncmp(k, section, n) == 0 && k[n] == '.')
            return 1;
    }
    return 0;
}

void
cfg_values_init(cfg_values *vals)
{
    memset(vals, 0, sizeof(*vals));
}

void
cfg_values_release(cfg_values *vals)
{
    size_t i;

    for (i = 0; i < CFG_OPT_COUNT; i++)
        free(vals->value[i]);
    for (i = 0; i < vals->nlist; i++)
        free(vals->list[i]);
    free(vals->list);
    cfg_values_init(vals);
}

/* The word of words ("a|b|c") that v is in any case, as words writes
 * it (the code compares the stored value with strcmp), into buf. 0 or -1. */
static int
choice_word(const char *words, const char *v, char *buf, size_t size)
{
    size_t n = strlen(v);
    const char *p = words;

    for (;;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncasecmp(p, v, n) == 0) {
            snprintf(buf, size, "%.*s", (int)len, p);
            return 0;
        }
        if (bar == NULL)
            return -1;
        p = bar + 1;
    }
}

/* "MIN MAX" or "MIN,MAX", numbers with MIN <= MAX, as "MIN MAX". */
static int
normalise_range(const char *v, char *buf, size_t size, cfg_err *e)
{
    char copy[128], lo[64], hi[64], rest;
    double a, b;

    if (strlen(v) >= sizeof(copy))
        return cfg_fail(e, CFG_EINVAL, "expects two numbers MIN MAX");
    memcpy(copy, v, strlen(v) + 1);
    for (char *c = copy; *c; c++)
        if (*c == ',')
            *c = ' ';
    if (sscanf(copy, "%63s %63s %c", lo, hi, &rest) != 2 ||
        hvd_parse_double(lo, 0, 1e9, &a) != 0 ||
        hvd_parse_double(hi, 0, 1e9, &b) != 0 || a > b)
        return cfg_fail(e, CFG_EINVAL,
                        "expects two numbers MIN MAX, 0 <= MIN <= MAX, not "
                        "'%s'",
                        v);
    snprintf(buf, size, "%s %s", lo, hi);
    return 0;
}

/* Checks value against the option's type; writes the normalised form. */
static int
normalise(const cfg_option *o, const char *v, char *buf, size_t size,
          cfg_err *e)
{
    long l;
    double d;
    int b;

    switch (o->type) {
    case CFG_T_FLAG:
        if (hvd_parse_bool(v, &b) != 0)
            return cfg_fail(e, CFG_EINVAL, "expects true or false, not '%s'",
                            v);
        snprintf(buf, size, "%d", b);
        return 0;
    case CFG_T_INT:
    case CFG_T_POSINT:
        if (hvd_parse_long(v, o->type == CFG_T_POSINT, 2147483647L, &l) != 0)
            return cfg_fail(e, CFG_EINVAL, "expects an integer >= %d, not '%s'",
                            o->type == CFG_T_POSINT, v);
        break;
    case CFG_T_NUM:
    case CFG_T_UNIT:
        if (hvd_parse_double(v, 0, o->type == CFG_T_UNIT ? 1 : 1e9, &d) != 0)
            return cfg_fail(e, CFG_EINVAL, "expects a number %s, not '%s'",
                            o->type == CFG_T_UNIT ? "from 0 to 1" : ">= 0", v);
        break;
    case CFG_T_CHOICE:
        if (choice_word(o->arg, v, buf, size) != 0)
            return cfg_fail(e, CFG_EINVAL, "expects one of %s, not '%s'",
                            o->arg, v);
        return 0;
    case CFG_T_PORT:
    case CFG_T_PORT_OR_ANY:
        if (hvd_parse_long(v, o->type == CFG_T_PORT, 65535, &l) != 0)
            return cfg_fail(e, CFG_EINVAL,
                            "expects a port from %d to 65535, not '%s'",
                            o->type == CFG_T_PORT, v);
        break;
    case CFG_T_RANGE:
        return normalise_range(v, buf, size, e);
    case CFG_T_STR:
    case CFG_T_LIST:
        if (v[0] == '\0')
            return cfg_fail(e, CFG_EINVAL, "expects a value");
        break;
    }
    snprintf(buf, size, "%s", v);
    return 0;
}

static int
append(cfg_values *vals, const char *v)
{
    char **n = realloc(vals->list, (vals->nlist + 1) * sizeof(*n));

    if (n == NULL)
        return CFG_ENOMEM;
    vals->list = n;
    if ((n[vals->nlist] = strdup(v)) == NULL)
        return CFG_ENOMEM;
    vals->nlist++;
    return 0;
}

int
cfg_values_set(cfg_values *vals, cfg_option_id id, const char *value,
               cfg_err *e)
{
    const cfg_option *o = &cfg_options[id];
    char buf[4096], *copy;
    int r;

    if (value == NULL && o->type == CFG_T_FLAG)
        value = o->arg;
    if (value == NULL)
        return cfg_fail(e, CFG_EINVAL, "expects a value");
    if (strlen(value) >= sizeof(buf))
        return cfg_fail(e, CFG_ERANGE, "value longer than %zu bytes",
                        sizeof(buf) - 1);
    if ((r = normalise(o, value, buf, sizeof(buf), e)) != 0)
        return r;
    if (o->type == CFG_T_LIST)
        return append(vals, buf) ? cfg_fail(e, CFG_ENOMEM, "out of memory") : 0;
    if ((copy = strdup(buf)) == NULL)
        return cfg_fail(e, CFG_ENOMEM, "out of memory");
    free(vals->value[id]);
    vals->value[id] = copy;
    return 0;
}

int
cfg_values_merge(cfg_values *dst, const cfg_values *src, cfg_err *e)
{
    char **mine = dst->list;
    size_t i, nmine = dst->nlist;
    /* -H and --hostfile are two ways to give one thing, the hosts: either,
     * given in dst, hides both of src (decided before the loop fills dst) */
    int hosts_given = dst->value[CFG_OPT_HOSTS] || dst->value[CFG_OPT_HOSTFILE];
    int r = 0;

    for (i = 0; i < CFG_OPT_COUNT; i++)
        if (dst->value[i] == NULL && src->value[i] != NULL &&
            !(hosts_given && (i == CFG_OPT_HOSTS || i == CFG_OPT_HOSTFILE)) &&
            (dst->value[i] = strdup(src->value[i])) == NULL)
            return cfg_fail(e, CFG_ENOMEM, "out of memory");
    dst->list = NULL;
    dst->nlist = 0;
    for (i = 0; i < src->nlist && r == 0; i++)
        r = append(dst, src->list[i]);
    for (i = 0; i < nmine; i++) {
        if (r == 0)
            r = append(dst, mine[i]);
        free(mine[i]);
    }
    free(mine);
    return r ? cfg_fail(e, CFG_ENOMEM, "out of memory") : 0;
}

const char *
cfg_values_get(const cfg_values *vals, cfg_option_id id)
{
    return vals->value[id];
}

long
cfg_values_long(const cfg_values *vals, cfg_option_id id, long dflt)
{
    long v;

    if (vals->value[id] == NULL ||
        hvd_parse_long(vals->value[id], 0, 2147483647L, &v) != 0)
        return dflt;
    return v;
}

double
cfg_values_double(const cfg_values *vals, cfg_option_id id, double dflt)
{
    double v;

    if (vals->value[id] == NULL ||
        hvd_parse_double(vals->value[id], 0, 1e9, &v) != 0)
        return dflt;
    return v;
}

int
cfg_values_flag(const cfg_values *vals, cfg_option_id id)
{
    return vals->value[id] != NULL && strcmp(vals->value[id], "1") == 0;
}

int
cfg_values_tunable_env(const cfg_values *vals,
                       int (*emit)(const char *name, const char *value,
                                   void *arg),
                       void *arg)
{
    char buf[64];
    size_t i;
    int r;

    for (i = 0; i < CFG_OPT_COUNT; i++) {
        const cfg_option *o = &cfg_options[i];
        const char *v = vals->value[i];
        if (o->env == NULL || v == NULL)
            continue;
        if (o->requires != CFG_OPT_NONE &&
            (vals->value[o->requires] == NULL ||
             strcmp(vals->value[o->requires], "0") == 0))
            continue;
        if (o->xform == CFG_X_MB) {
            snprintf(buf, sizeof(buf), "%lld",
                     strtoll(v, NULL, 10) * 1024LL * 1024LL);
            v = buf;
        } else if (o->xform == CFG_X_NOT) {
            v = strcmp(v, "1") == 0 ? "0" : "1";
        }
        if ((r = emit(o->env, v, arg)) != 0)
            return r;
    }
    return 0;
}
