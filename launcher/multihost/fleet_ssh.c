/* The fleet's logins over SSH (fleet.h's fleet_ssh): hvdrun-ssh's, with
 * hvdstartssh (libssh2). hvdrun itself, which runs Slurm jobs' fleets,
 * has none. */
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_link.h"
#include "fleet.h"
#include "fleet_state.h"
#include "known_hosts.h"
#include "sibling.h"

static void
shell_quote(const char *s, char *out, size_t size)
{
    size_t o = 0;

    out[o++] = '\'';
    for (; *s && o + 6 < size; s++) {
        if (*s == '\'') {
            memcpy(out + o, "'\\''", 4);
            o += 4;
        } else {
            out[o++] = *s;
        }
    }
    out[o++] = '\'';
    out[o] = '\0';
}

static int
setup(fleet *j)
{
    char quoted[PATH_MAX + 16], hvdrun[PATH_MAX + 16];
    const char *remote = cfg_values_get(&j->s->values, CFG_OPT_REMOTE_HVDRUN);
    struct passwd *pw = getpwuid(getuid());

    /* the hosts run the hvdrun beside this program */
    if (sibling_path("hvdrun", hvdrun, sizeof(hvdrun)))
        return -1;
    shell_quote(remote ? remote : hvdrun, quoted, sizeof(quoted));
    snprintf(j->command, sizeof(j->command), "exec %s --agent%s", quoted,
             j->spec->check_only ? " --check" : "");
    snprintf(j->user, sizeof(j->user), "%s",
             pw               ? pw->pw_name
             : getenv("USER") ? getenv("USER")
                              : "root");
    known_hosts_default(j->known_hosts, sizeof(j->known_hosts));
    j->accept_new = cfg_values_flag(&j->s->values, CFG_OPT_SSH_ACCEPT_NEW) ||
                    known_hosts_config_accepts_new();
    if (hvdrun_links_begin() != 0)
        return -1;
    j->links_begun = 1;
    return 0;
}

static hvdrun_link *
open_link(fleet *j, int i)
{
    const cfg_host *host = &j->s->hosts.hosts[i];
    ssh_target t = {
        .host = host->name,
        .port = host->ssh_port
                    ? host->ssh_port
                    : (int)cfg_values_long(&j->s->values, CFG_OPT_SSH_PORT, 22),
        .user = host->user ? host->user : j->user,
        .identity_file =
            host->identity_file
                ? host->identity_file
                : cfg_values_get(&j->s->values, CFG_OPT_SSH_IDENTITY_FILE),
        .known_hosts = j->known_hosts,
        .accept_new = j->accept_new,
    };

    return hvdrun_link_ssh(&t, j->command);
}

static void
end(fleet *j)
{
    hvdrun_links_end();
    j->links_begun = 0;
}

const fleet_ssh fleet_ssh_libssh2 = {setup, open_link, end};
