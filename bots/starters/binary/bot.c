/* A Grass bot as a static executable: a random legal action at every decision
 * (bots/PROTOCOL.md). Build it on any x86-64 Linux:  gcc -O2 -static -o bot bot.c
 * and upload the file `bot`. Messages are one JSON object a line; the runner writes them
 * compactly, "type" and "id" first, and action texts hold no quotes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char line[1 << 20];

static unsigned long long number_after(const char *key) {
    char tag[64];
    snprintf(tag, sizeof tag, "\"%s\":", key);
    const char *at = strstr(line, tag);
    return at ? strtoull(at + strlen(tag), NULL, 10) : 0;
}

int main(void) {
    unsigned long long seed = 1;
    while (fgets(line, sizeof line, stdin)) {
        if (strstr(line, "\"type\":\"hello\"")) {
            seed = number_after("rng_seed") | 1;
            puts("{\"type\":\"ready\",\"protocol\":1}");
        } else if (strstr(line, "\"type\":\"act\"")) {
            char *legal[256];
            int count = 0;
            char *at = strstr(line, "\"legal\":[") + 9;
            while (*at == '"' && count < 256) {
                legal[count++] = at + 1;
                at = strchr(at + 1, '"');
                *at++ = '\0';
                if (*at == ',') at++;
            }
            seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;  /* xorshift */
            printf("{\"type\":\"action\",\"id\":%llu,\"action\":\"%s\"}\n",
                   number_after("id"), legal[seed % count]);
        } else if (strstr(line, "\"type\":\"game_end\"")) {
            return 0;
        }
        fflush(stdout);
    }
    return 0;
}
