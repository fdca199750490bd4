/* Errors are values: every library call returns a cs_status; the first failure's message
 * (one line, naming the file/line/cell/parameter concerned) is kept in a thread-local buffer
 * that the CLI prints. The library never aborts. */
#ifndef CS_ERROR_H
#define CS_ERROR_H

#define CS_STATUS_LIST(X)                                        \
    X(CS_OK, 0, "ok")                                            \
    X(CS_ERR_IO, -1, "input/output error")                       \
    X(CS_ERR_PARSE, -2, "malformed input")                       \
    X(CS_ERR_INVALID, -3, "invalid parameter")                   \
    X(CS_ERR_NOMEM, -4, "out of memory")                         \
    X(CS_ERR_NUMERIC, -5, "numerical failure")                   \
    X(CS_ERR_UNSUPPORTED, -6, "not supported or not compiled in") \
    X(CS_ERR_DEVICE, -7, "GPU error")                            \
    X(CS_ERR_INTERNAL, -8, "internal error")

typedef enum {
#define CS__ENUM(name, value, text) name = value,
    CS_STATUS_LIST(CS__ENUM)
#undef CS__ENUM
} cs_status;

/* Human name of a status code. */
const char *cs_status_string(cs_status s);

/* Record an error message (printf-style) and return `code`. Keeps the first message until
 * cs_error_clear(); later ones are dropped so the root cause is what the user sees. */
cs_status cs_error_set(cs_status code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The recorded message ("" when none). */
const char *cs_error_message(void);
void cs_error_clear(void);

/* Check a condition; on failure record the message and return the code from the caller. */
#define CS_CHECK(cond, code, ...)                  \
    do {                                           \
        if (!(cond)) return cs_error_set((code), __VA_ARGS__); \
    } while (0)

/* Propagate a failing status. */
#define CS_TRY(expr)                     \
    do {                                 \
        cs_status cs__s = (expr);        \
        if (cs__s != CS_OK) return cs__s; \
    } while (0)

#endif
