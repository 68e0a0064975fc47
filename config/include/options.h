/* The one option table: every hvdrun setting once, with its command-line
 * name, its key in the YAML config file and, for Horovod's tunables, the
 * worker variable it becomes. --help, the man page test, the CLI parser and
 * the config file parser all read this table. */
#ifndef CFG_OPTIONS_H
#define CFG_OPTIONS_H

#include <stddef.h>

#include "cfg_error.h"

typedef enum cfg_argtype {
    CFG_T_FLAG,        /* no argument on the command line; a boolean in YAML */
    CFG_T_INT,         /* integer >= 0 */
    CFG_T_POSINT,      /* integer >= 1 */
    CFG_T_NUM,         /* number >= 0 */
    CFG_T_UNIT,        /* number in [0, 1] */
    CFG_T_STR,         /* any non-empty text */
    CFG_T_LIST,        /* repeatable text */
    CFG_T_CHOICE,      /* one of the '|'-separated words in `arg`, any case;
                        * stored as `arg` writes it */
    CFG_T_PORT,        /* TCP port, 1 to 65535 */
    CFG_T_PORT_OR_ANY, /* 0 (any port) to 65535 */
    CFG_T_RANGE        /* two numbers MIN <= MAX: two words on the command line,
                        * "MIN MAX" or "MIN,MAX" in one; stored "MIN MAX" */
} cfg_argtype;

/* How a setting becomes a worker variable. */
typedef enum cfg_xform {
    CFG_X_NONE, /* not a worker variable */
    CFG_X_COPY, /* the value as it is */
    CFG_X_MB,   /* mebibytes to bytes */
    CFG_X_BOOL, /* 1 or 0 */
    CFG_X_NOT   /* 0 or 1: the setting says "enabled", the variable "disable" */
} cfg_xform;

/* X(id, long, short, type, config key, env, xform, requires, arg, help)
 * `arg` is the metavar, the value a flag stores, or a CHOICE's words.
 * `requires`: the variable is only set when that other setting is true. */
#define CFG_OPTIONS(X)                                                         \
    X(NP, "num-proc", "np", CFG_T_POSINT, "np", NULL, CFG_X_NONE, NONE, "N",   \
      "number of worker processes (default: every slot)")                      \
    X(HOSTS, "hosts", "H", CFG_T_STR, "hosts", NULL, CFG_X_NONE, NONE,         \
      "HOST:N,...", "hosts and their slots (default: localhost)")              \
    X(HOSTFILE, "hostfile", NULL, CFG_T_STR, "hostfile", NULL, CFG_X_NONE,     \
      NONE, "FILE", "host file: 'host slots=N', 'host:N' lines, or YAML")      \
    X(CONFIG_FILE, "config-file", NULL, CFG_T_STR, NULL, NULL, CFG_X_NONE,     \
      NONE, "FILE", "YAML file with Horovod's and hvdrun's settings")          \
    X(ENV, NULL, "x", CFG_T_LIST, "env", NULL, CFG_X_NONE, NONE,               \
      "NAME[=VALUE]", "forward NAME to the workers, or set it to VALUE")       \
    X(OUTPUT_FILENAME, "output-filename", NULL, CFG_T_STR, "output_filename",  \
      NULL, CFG_X_NONE, NONE, "DIR",                                           \
      "also write each rank's output to DIR/rank.N/stdout and stderr")         \
    X(PREFIX_TIMESTAMP, "prefix-timestamp", NULL, CFG_T_FLAG,                  \
      "prefix_timestamp", NULL, CFG_X_NONE, NONE, "1",                         \
      "start every output line with the time")                                 \
    X(KILL_GRACE, "kill-grace", NULL, CFG_T_NUM, "kill_grace", NULL,           \
      CFG_X_NONE, NONE, "SECONDS",                                             \
      "wait between SIGTERM and SIGKILL when stopping workers (default 3)")    \
    X(START_TIMEOUT, "start-timeout", NULL, CFG_T_NUM, "start_timeout", NULL,  \
      CFG_X_NONE, NONE, "SECONDS",                                             \
      "time allowed for every worker to start (default 30)")                   \
    X(MIN_NP, "min-np", NULL, CFG_T_POSINT, "min_np", NULL, CFG_X_NONE, NONE,  \
      "N", "elastic: go on after a host fails while N ranks are left")         \
    X(MAX_NP, "max-np", NULL, CFG_T_POSINT, "max_np", NULL, CFG_X_NONE, NONE,  \
      "N", "elastic: at most N ranks (default: every slot)")                   \
    X(ELASTIC_TIMEOUT, "elastic-timeout", NULL, CFG_T_NUM, "elastic_timeout",  \
      "HOROVOD_ELASTIC_TIMEOUT", CFG_X_COPY, NONE, "SECONDS",                  \
      "elastic: wait this long for --min-np ranks (default 600)")              \
    X(RESET_LIMIT, "reset-limit", NULL, CFG_T_INT, "reset_limit", NULL,        \
      CFG_X_NONE, NONE, "N",                                                   \
      "elastic: fail after N changes of hosts (default: no limit)")            \
    X(HOST_DISCOVERY_SCRIPT, "host-discovery-script", NULL, CFG_T_STR,         \
      "host_discovery_script", NULL, CFG_X_NONE, NONE, "COMMAND",              \
      "elastic: a command that prints the hosts, 'host[:slots]' per line; "    \
      "run every second")                                                      \
    X(SLOTS_PER_HOST, "slots-per-host", NULL, CFG_T_POSINT, "slots_per_host",  \
      NULL, CFG_X_NONE, NONE, "N",                                             \
      "elastic: slots of a discovered host that names none (default 1)")       \
    X(BLACKLIST_COOLDOWN_RANGE, "blacklist-cooldown-range", NULL, CFG_T_RANGE, \
      "blacklist_cooldown_range", NULL, CFG_X_NONE, NONE, "MIN MAX",           \
      "elastic: a failed host may come back after MIN to MAX s, longer "       \
      "after each failure (default 10 300)")                                   \
    X(MAX_RESTARTS, "max-restarts", NULL, CFG_T_INT, "max_restarts", NULL,     \
      CFG_X_NONE, NONE, "N",                                                   \
      "after a failure, start the whole job again, up to N times")             \
    X(RENDEZVOUS_ADDR, "rendezvous-addr", "hm", CFG_T_STR, "rendezvous_addr",  \
      NULL, CFG_X_NONE, NONE, "ADDR",                                          \
      "address hvdd listens on (default: every address)")                      \
    X(RENDEZVOUS_PORT, "rendezvous-port", NULL, CFG_T_PORT_OR_ANY,             \
      "rendezvous_port", NULL, CFG_X_NONE, NONE, "PORT",                       \
      "port hvdd listens on (default: any)")                                   \
    X(HEARTBEAT_TIMEOUT, "heartbeat-timeout", NULL, CFG_T_NUM,                 \
      "heartbeat_timeout", NULL, CFG_X_NONE, NONE, "SECONDS",                  \
      "stop the job when a registered rank is silent this long (0: never)")    \
    X(NETWORK_INTERFACE, "network-interface", NULL, CFG_T_STR,                 \
      "network_interface", NULL, CFG_X_NONE, NONE, "NAME[,NAME]|CIDR",         \
      "network the workers use, by interface name or address range")           \
    X(SSH_PORT, "ssh-port", "p", CFG_T_PORT, "ssh_port", NULL, CFG_X_NONE,     \
      NONE, "PORT", "SSH port of the other hosts (default 22)")                \
    X(SSH_IDENTITY_FILE, "ssh-identity-file", "i", CFG_T_STR,                  \
      "ssh_identity_file", NULL, CFG_X_NONE, NONE, "FILE",                     \
      "SSH private key (Ed25519 or ECDSA) tried after ssh-agent's")            \
    X(SSH_ACCEPT_NEW, "ssh-accept-new", NULL, CFG_T_FLAG, "ssh_accept_new",    \
      NULL, CFG_X_NONE, NONE, "1",                                             \
      "trust and record host keys missing from known_hosts")                   \
    X(SSH_PARALLEL, "ssh-parallel", NULL, CFG_T_POSINT, "ssh_parallel", NULL,  \
      CFG_X_NONE, NONE, "N",                                                   \
      "SSH connections being set up at once (default 8)")                      \
    X(REMOTE_HVDRUN, "remote-hvdrun", NULL, CFG_T_STR, "remote_hvdrun", NULL,  \
      CFG_X_NONE, NONE, "PATH",                                                \
      "hvdrun on the other hosts (default: this hvdrun's path)")               \
    X(LAUNCHER, "launcher", NULL, CFG_T_CHOICE, "launcher", NULL, CFG_X_NONE,  \
      NONE, "ssh|slurm|local",                                                 \
      "how agents start on the hosts: ssh, slurm (one srun step) or local "    \
      "(this host only); default slurm for a Slurm allocation's nodes, "       \
      "else ssh")                                                              \
    X(STATUS_URL, "status-url", NULL, CFG_T_FLAG, NULL, NULL, CFG_X_NONE,      \
      NONE, "1",                                                               \
      "print the URL of the job's live page (it holds the job's token)")       \
    X(CHECK_SSH, "check-ssh", NULL, CFG_T_FLAG, NULL, NULL, CFG_X_NONE, NONE,  \
      "1", "check SSH to every host (connect, host key, login, hvdrun), exit") \
    X(DRY_RUN, "dry-run", NULL, CFG_T_FLAG, NULL, NULL, CFG_X_NONE, NONE, "1", \
      "print the plan and one rank's environment, then exit")                  \
    X(DRY_RUN_RANK, "dry-run-rank", NULL, CFG_T_INT, NULL, NULL, CFG_X_NONE,   \
      NONE, "RANK", "the rank whose environment --dry-run prints (default 0)") \
    X(VERBOSE, "verbose", NULL, CFG_T_FLAG, "verbose", NULL, CFG_X_NONE, NONE, \
      "1", "say what hvdrun does, on stderr")                                  \
    X(VERSION, "version", "v", CFG_T_FLAG, NULL, NULL, CFG_X_NONE, NONE, "1",  \
      "print the version and exit")                                            \
    X(HELP, "help", "h", CFG_T_FLAG, NULL, NULL, CFG_X_NONE, NONE, "1",        \
      "print this help and exit")                                              \
    X(GLOO, "gloo", NULL, CFG_T_FLAG, NULL, NULL, CFG_X_NONE, NONE, "1",       \
      "use the Gloo controller (the only one; accepted for horovodrun)")       \
    X(CONTROLLER, NULL, NULL, CFG_T_CHOICE, "controller", NULL, CFG_X_NONE,    \
      NONE, "gloo", "controller: gloo")                                        \
    X(FUSION_THRESHOLD_MB, "fusion-threshold-mb", NULL, CFG_T_INT,             \
      "params.fusion_threshold_mb", "HOROVOD_FUSION_THRESHOLD", CFG_X_MB,      \
      NONE, "MB", "tensor fusion buffer size")                                 \
    X(CYCLE_TIME_MS, "cycle-time-ms", NULL, CFG_T_NUM, "params.cycle_time_ms", \
      "HOROVOD_CYCLE_TIME", CFG_X_COPY, NONE, "MS",                            \
      "time between fusion cycles")                                            \
    X(CACHE_CAPACITY, "cache-capacity", NULL, CFG_T_INT,                       \
      "params.cache_capacity", "HOROVOD_CACHE_CAPACITY", CFG_X_COPY, NONE,     \
      "N", "response cache entries")                                           \
    X(HIERARCHICAL_ALLREDUCE, "hierarchical-allreduce", NULL, CFG_T_FLAG,      \
      "params.hierarchical_allreduce", "HOROVOD_HIERARCHICAL_ALLREDUCE",       \
      CFG_X_BOOL, NONE, "1", "allreduce within hosts, then across")            \
    X(HIERARCHICAL_ALLGATHER, "hierarchical-allgather", NULL, CFG_T_FLAG,      \
      "params.hierarchical_allgather", "HOROVOD_HIERARCHICAL_ALLGATHER",       \
      CFG_X_BOOL, NONE, "1", "allgather within hosts, then across")            \
    X(AUTOTUNE, "autotune", NULL, CFG_T_FLAG, "autotune.enabled",              \
      "HOROVOD_AUTOTUNE", CFG_X_BOOL, NONE, "1", "tune fusion parameters")     \
    X(AUTOTUNE_LOG_FILE, "autotune-log-file", NULL, CFG_T_STR,                 \
      "autotune.log_file", "HOROVOD_AUTOTUNE_LOG", CFG_X_COPY, AUTOTUNE,       \
      "FILE", "autotune log")                                                  \
    X(AUTOTUNE_WARMUP_SAMPLES, "autotune-warmup-samples", NULL, CFG_T_INT,     \
      "autotune.warmup_samples", "HOROVOD_AUTOTUNE_WARMUP_SAMPLES",            \
      CFG_X_COPY, AUTOTUNE, "N", "autotune samples discarded at start")        \
    X(AUTOTUNE_STEPS_PER_SAMPLE, "autotune-steps-per-sample", NULL, CFG_T_INT, \
      "autotune.steps_per_sample", "HOROVOD_AUTOTUNE_STEPS_PER_SAMPLE",        \
      CFG_X_COPY, AUTOTUNE, "N", "autotune steps per sample")                  \
    X(AUTOTUNE_BAYES_OPT_MAX_SAMPLES, "autotune-bayes-opt-max-samples", NULL,  \
      CFG_T_INT, "autotune.bayes_opt_max_samples",                             \
      "HOROVOD_AUTOTUNE_BAYES_OPT_MAX_SAMPLES", CFG_X_COPY, AUTOTUNE, "N",     \
      "autotune Bayesian optimisation samples")                                \
    X(AUTOTUNE_GAUSSIAN_PROCESS_NOISE, "autotune-gaussian-process-noise",      \
      NULL, CFG_T_UNIT, "autotune.gaussian_process_noise",                     \
      "HOROVOD_AUTOTUNE_GAUSSIAN_PROCESS_NOISE", CFG_X_COPY, AUTOTUNE, "X",    \
      "autotune noise, 0 to 1")                                                \
    X(TIMELINE_FILENAME, "timeline-filename", NULL, CFG_T_STR,                 \
      "timeline.filename", "HOROVOD_TIMELINE", CFG_X_COPY, NONE, "FILE",       \
      "write a Horovod timeline")                                              \
    X(TIMELINE_MARK_CYCLES, "timeline-mark-cycles", NULL, CFG_T_FLAG,          \
      "timeline.mark_cycles", "HOROVOD_TIMELINE_MARK_CYCLES", CFG_X_BOOL,      \
      TIMELINE_FILENAME, "1", "mark cycles in the timeline")                   \
    X(STALL_CHECK, "no-stall-check", NULL, CFG_T_FLAG, "stall_check.enabled",  \
      "HOROVOD_STALL_CHECK_DISABLE", CFG_X_NOT, NONE, "0",                     \
      "disable the stall check")                                               \
    X(STALL_CHECK_WARNING, "stall-check-warning-time-seconds", NULL,           \
      CFG_T_INT, "stall_check.warning_time_seconds",                           \
      "HOROVOD_STALL_CHECK_TIME_SECONDS", CFG_X_COPY, NONE, "SECONDS",         \
      "warn about stalled ranks after this long")                              \
    X(STALL_CHECK_SHUTDOWN, "stall-check-shutdown-time-seconds", NULL,         \
      CFG_T_INT, "stall_check.shutdown_time_seconds",                          \
      "HOROVOD_STALL_SHUTDOWN_TIME_SECONDS", CFG_X_COPY, NONE, "SECONDS",      \
      "stop a stalled job after this long")                                    \
    X(MPI_THREADS_DISABLE, "mpi-threads-disable", NULL, CFG_T_FLAG,            \
      "library_options.mpi_threads_disable", "HOROVOD_MPI_THREADS_DISABLE",    \
      CFG_X_BOOL, NONE, "1", "Horovod's MPI threads switch")                   \
    X(NUM_NCCL_STREAMS, "num-nccl-streams", NULL, CFG_T_INT,                   \
      "library_options.num_nccl_streams", "HOROVOD_NUM_NCCL_STREAMS",          \
      CFG_X_COPY, NONE, "N", "NCCL streams per device")                        \
    X(THREAD_AFFINITY, "thread-affinity", NULL, CFG_T_INT,                     \
      "library_options.thread_affinity", "HOROVOD_THREAD_AFFINITY",            \
      CFG_X_COPY, NONE, "CPU", "pin Horovod's background thread")              \
    X(CCL_BGT_AFFINITY, NULL, NULL, CFG_T_INT,                                 \
      "library_options.ccl_bgt_affinity", "HOROVOD_CCL_BGT_AFFINITY",          \
      CFG_X_COPY, NONE, "CPU", "oneCCL background thread CPU")                 \
    X(GLOO_TIMEOUT_SECONDS, "gloo-timeout-seconds", NULL, CFG_T_INT,           \
      "library_options.gloo_timeout_seconds", "HOROVOD_GLOO_TIMEOUT_SECONDS",  \
      CFG_X_COPY, NONE, "SECONDS", "timeout of Gloo operations")               \
    X(LOG_LEVEL, "log-level", NULL, CFG_T_CHOICE, "logging.level",             \
      "HOROVOD_LOG_LEVEL", CFG_X_COPY, NONE,                                   \
      "TRACE|DEBUG|INFO|WARNING|ERROR|FATAL", "Horovod's log level")           \
    X(LOG_HIDE_TIMESTAMP, "log-hide-timestamp", NULL, CFG_T_FLAG,              \
      "logging.hide_timestamp", "HOROVOD_LOG_HIDE_TIME", CFG_X_BOOL, NONE,     \
      "1", "no time in Horovod's log lines")                                   \
    X(LOG_WITH_TIMESTAMP, NULL, NULL, CFG_T_FLAG, "logging.with_timestamp",    \
      "HOROVOD_LOG_HIDE_TIME", CFG_X_NOT, NONE, "1",                           \
      "time in Horovod's log lines")

typedef enum cfg_option_id {
#define CFG_OPTION_ENUM(id, ...) CFG_OPT_##id,
    CFG_OPTIONS(CFG_OPTION_ENUM)
#undef CFG_OPTION_ENUM
        CFG_OPT_COUNT,
    CFG_OPT_NONE = -1
} cfg_option_id;

typedef struct cfg_option {
    cfg_option_id id;
    const char *long_name;  /* "--long"; NULL: config file only */
    const char *short_name; /* "-np", "-H"; NULL: none */
    cfg_argtype type;
    const char *key; /* dotted config file path; NULL: command line only */
    const char *env; /* worker variable; NULL: none */
    cfg_xform xform;
    cfg_option_id requires;
    const char *arg;
    const char *help;
} cfg_option;

extern const cfg_option cfg_options[CFG_OPT_COUNT];

/* Lookups; NULL when there is no such option. Long names may be old
 * horovodrun spellings ("prefix-output-with-timestamp"). */
const cfg_option *cfg_option_by_long(const char *name);
const cfg_option *cfg_option_by_short(const char *name);
const cfg_option *cfg_option_by_key(const char *key);
/* 1 when some option's key starts with "section." */
int cfg_option_section_exists(const char *section);

/* The settings of one source (command line, config file), each unset until
 * given; merged by cfg_values_merge. Values are stored normalised: flags and
 * booleans as "1"/"0". */
typedef struct cfg_values {
    char *value[CFG_OPT_COUNT];
    char **list; /* CFG_T_LIST values in order (only ENV is a list) */
    size_t nlist;
} cfg_values;

void cfg_values_init(cfg_values *vals);
void cfg_values_release(cfg_values *vals);

/* Validates value for option id and stores a copy (a flag's value is the
 * table's `arg` when value is NULL). Errors say what was expected. */
int cfg_values_set(cfg_values *vals, cfg_option_id id, const char *value,
                   cfg_err *e);

/* Fills every setting that dst lacks from src; lists become src's entries
 * followed by dst's, so that later (command line) entries win. */
int cfg_values_merge(cfg_values *dst, const cfg_values *src, cfg_err *e);

const char *cfg_values_get(const cfg_values *vals, cfg_option_id id);
long cfg_values_long(const cfg_values *vals, cfg_option_id id, long dflt);
double cfg_values_double(const cfg_values *vals, cfg_option_id id, double dflt);
int cfg_values_flag(const cfg_values *vals, cfg_option_id id);

/* Calls emit(name, value, arg) for each Horovod variable the settings give,
 * in table order; stops at and returns the first non-zero result. */
int cfg_values_tunable_env(const cfg_values *vals,
                           int (*emit)(const char *name, const char *value,
                                       void *arg),
                           void *arg);

/* The YAML config file: Horovod's sections (params, autotune, timeline,
 * stall_check, library_options, logging, controller) and hvdrun's own keys.
 * Unknown keys fail with "file:line:column: unknown key 'a.b'". */
int cfg_configfile_parse(const char *text, size_t len, const char *file,
                         cfg_values *vals, cfg_err *e);
int cfg_configfile_load(const char *path, cfg_values *vals, cfg_err *e);

#endif
