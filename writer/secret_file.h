/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * secret_file.h - a password or token read from a small file, shared by
 * the scrape endpoints (BasicAuthPasswordFile, --basic-auth-password-file)
 * and remote_write (BasicAuth password file, BearerTokenFile).
 *
 * The secret is the file's first line without its line end. The file is
 * opened without blocking (a FIFO never holds a start) and must be a
 * regular file: a directory, a FIFO or a device is refused by name. A
 * file that group or others may access is read, with a warning naming its
 * mode (as ssh says of a private key). The copy on the stack is wiped; the
 * caller wipes the returned one with secret_free().
 */
#ifndef PCIESCOPE_SECRET_FILE_H
#define PCIESCOPE_SECRET_FILE_H

#include <stddef.h>

/* The longest first line read (a token of a few KiB fits). */
#define SECRET_FILE_MAX 8192

/*
 * secret_file_check - whether @path can be read as a secret file (a
 * readable regular file), without reading it. @what names the option in
 * the messages. A mode that lets group or others in is written to @warn
 * ("" otherwise). Returns 0 or a negative errno, with @err saying what.
 */
int secret_file_check(const char *path, const char *what, char *warn, size_t warnlen, char *err,
                      size_t errlen);

/*
 * secret_file_read - the first line of @path, at most @max bytes
 * (1..SECRET_FILE_MAX), in a new string. Refused, with @err naming the
 * file: a file that is not regular, a first line that is empty, longer
 * than @max or holds a NUL byte. @warn as for secret_file_check. Returns 0,
 * -EINVAL, -ENOMEM or the errno of opening or reading.
 */
int secret_file_read(const char *path, const char *what, size_t max, char **out, char *warn,
                     size_t warnlen, char *err, size_t errlen);

/* Wipes and frees a secret. NULL is fine. */
void secret_free(char *s);

#endif
