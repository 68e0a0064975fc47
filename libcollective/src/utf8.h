/* What the timeline and the stall warning (JSON, so UTF-8) need to know
 * of the bytes of a user's tensor name. */
#ifndef COLL_UTF8_H
#define COLL_UTF8_H

/* Length of the valid UTF-8 sequence at s (1 for ASCII, up to 4), or 0
 * when s does not start one (a stray or cut byte). */
static inline int
utf8_seq_len(const unsigned char *s)
{
    int n = s[0] < 0x80             ? 1
            : (s[0] & 0xe0) == 0xc0 ? 2
            : (s[0] & 0xf0) == 0xe0 ? 3
            : (s[0] & 0xf8) == 0xf0 ? 4
                                    : 0;

    for (int k = 1; k < n; k++)
        if ((s[k] & 0xc0) != 0x80)
            return 0;
    return n;
}

#endif
