/* A hostile bot in C (the hostile suite's escapes, from a static binary): it tries the
 * network, the host's files, a pty, the host-wide counters, a lock on a shared file, a memory
 * bomb and a fork bomb, reports what it got on stderr (HOSTILE {...}), then plays legal moves.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <unistd.h>

static char line[1 << 20];
static char found[8192];

static void note(const char *key, long value) {
    char item[256];
    snprintf(item, sizeof item, "%s\"%s\": %ld", found[1] ? ", " : "", key, value);
    strncat(found, item, sizeof found - strlen(found) - 2);
}

/* 0 when the call worked, else its errno. */
static long result(long rc) { return rc < 0 ? errno : 0; }

static void attack(void) {
    strcpy(found, "{");
    int s = socket(AF_INET, SOCK_STREAM, 0);
    note("inet_socket", result(s));
    struct sockaddr_in redis = {.sin_family = AF_INET, .sin_port = htons(6379),
                                .sin_addr.s_addr = htonl(0x7f000001)};
    if (s >= 0) note("connect", result(connect(s, (struct sockaddr *)&redis, sizeof redis)));
    note("shadow", result(open("/etc/shadow", O_RDONLY)));
    note("work", result(open("/work", O_RDONLY | O_DIRECTORY)));
    note("write_root", result(open("/attack", O_CREAT | O_WRONLY, 0644)));
    note("write_usr", result(open("/usr/bin/attack", O_CREAT | O_WRONLY, 0644)));
    note("ptmx", result(open("/dev/ptmx", O_RDWR)));
    note("pty_count", result(open("/proc/sys/kernel/pty/nr", O_RDONLY)));
    struct sysinfo info;
    note("sysinfo", result(sysinfo(&info)));
    int shared = open("/usr/bin/env", O_RDONLY);
    note("flock", result(flock(shared, LOCK_EX | LOCK_NB)));

    pid_t eater = fork();  /* a memory bomb, in a child so the bot lives on */
    if (eater == 0) {
        for (;;) {
            char *chunk = malloc(1 << 20);
            if (!chunk) _exit(42);  /* RLIMIT_AS: the allocation fails */
            memset(chunk, 1, 1 << 20);
        }
    }
    int status = 0;
    waitpid(eater, &status, 0);
    note("memory_bomb", WIFSIGNALED(status) ? -WTERMSIG(status) : WEXITSTATUS(status));

    signal(SIGCHLD, SIG_IGN);  /* the sleepers below are never waited for */
    long forks = 0, refused = 0;
    for (int i = 0; i < 200; i++) {  /* a fork bomb: sleepers until forks are refused */
        pid_t child = fork();
        if (child == 0) { pause(); _exit(0); }
        if (child < 0) { refused = errno; break; }
        forks++;
    }
    note("forks", forks);
    note("fork_refused", refused);
    strcat(found, "}");
    fprintf(stderr, "HOSTILE %s\n", found);
    fflush(stderr);
}

static unsigned long long number_after(const char *key) {
    char tag[64];
    snprintf(tag, sizeof tag, "\"%s\":", key);
    const char *at = strstr(line, tag);
    return at ? strtoull(at + strlen(tag), NULL, 10) : 0;
}

int main(void) {
    attack();
    while (fgets(line, sizeof line, stdin)) {
        if (strstr(line, "\"type\":\"hello\"")) {
            puts("{\"type\":\"ready\",\"protocol\":1}");
        } else if (strstr(line, "\"type\":\"act\"")) {
            char *first = strstr(line, "\"legal\":[\"") + 10;
            *strchr(first, '"') = '\0';
            printf("{\"type\":\"action\",\"id\":%llu,\"action\":\"%s\"}\n",
                   number_after("id"), first);
        } else if (strstr(line, "\"type\":\"game_end\"")) {
            return 0;
        }
        fflush(stdout);
    }
    return 0;
}
