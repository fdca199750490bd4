#include "cs_error.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char cs__message[1024];
static _Thread_local int cs__has_message;

const char *cs_status_string(cs_status s) {
    switch (s) {
#define CS__CASE(name, value, text) \
    case name: return text;
        CS_STATUS_LIST(CS__CASE)
#undef CS__CASE
    }
    return "unknown status";
}

cs_status cs_error_set(cs_status code, const char *fmt, ...) {
    if (!cs__has_message) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(cs__message, sizeof cs__message, fmt, ap);
        va_end(ap);
        /* one line, whatever the input echoed in it (a JSON key may hold a raw newline) */
        for (char *c = cs__message; *c; ++c)
            if ((unsigned char)*c < 0x20) *c = ' ';
        cs__has_message = 1;
    }
    return code;
}

const char *cs_error_message(void) { return cs__has_message ? cs__message : ""; }

void cs_error_clear(void) {
    cs__has_message = 0;
    cs__message[0] = '\0';
}
