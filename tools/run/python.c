/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-run: Python components. Which interpreter a component runs (its cmd[0] when that is a
 * python, else the interpreter its script's #! line names), and --check's test of it: the
 * interpreter started once, as the launch would start it, to import numpy and xfer. The
 * `python3` first in PATH is often not the one the package was built for (a pyenv or venv
 * interpreter without numpy); the launch would then die at import with a message that names
 * neither the interpreter nor the fix. */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run.h"

#define CHECK_TIMEOUT_MS 60000 /* numpy's import on a slow shared file system is seconds */
#define CHECK_OUTPUT_MAX 16384

/* What --check runs in the interpreter: argv[1] is the directory the run's sys.path[0] would
 * be (the script's), empty for the working directory. One line per result. */
static const char check_code[] =
    "import sys\n"
    "d = sys.argv[1]\n"
    "if d and not sys.flags.isolated and not getattr(sys.flags, 'safe_path', False):\n"
    "    sys.path[0] = d\n"
    "print('python', '%d.%d.%d' % sys.version_info[:3], sys.executable, flush=True)\n"
    "for m in ('numpy', 'xfer'):\n"
    "    try:\n"
    "        mod = __import__(m)\n"
    "    except BaseException as e:\n"
    "        print('fail', m, type(e).__name__ + ': ' + ' '.join(str(e).split()), flush=True)\n"
    "        sys.exit(3)\n"
    "    print('ok', m, getattr(mod, '__version__', '?'),\n"
    "          (getattr(mod, '__file__', None) or '?').rsplit('/', 1)[0], flush=True)\n";

/* python, python3, python3.11: the names of a CPython interpreter. */
static int python_name(const char *path)
{
    const char *base = strrchr(path, '/');

    base = base ? base + 1 : path;
    return strncmp(base, "python", 6) == 0 && base[6 + strspn(base + 6, "0123456789.")] == '\0';
}

/* The directory of @p file, symbolic links resolved (what Python puts first in sys.path). */
static char *script_dir(const char *file)
{
    char *real = realpath(file, NULL), *d;

    d = dir_of(real ? real : file);
    free(real);
    return d;
}

/* PATH as component @p k sees it: its env's, else xfer-run's. */
static const char *component_path(const xfer_cfg_component_t *k)
{
    int i;

    for (i = 0; i < k->nenv; i++)
        if (strncmp(k->env[i], "PATH=", 5) == 0)
            return k->env[i] + 5;
    return getenv("PATH");
}

/* @p name in the directories of @p path (NULL if none). */
static char *find_in(const char *name, const char *path)
{
    const char *p, *end;

    if (!path)
        return NULL;
    for (p = path;; p = end + 1) {
        char *cand;
        end = p + strcspn(p, ":");
        cand = end == p ? abs_path(name) : xasprintf("%.*s/%s", (int) (end - p), p, name);
        if (is_exec_file(cand))
            return cand;
        free(cand);
        if (*end == '\0')
            return NULL;
    }
}

/* The interpreter of a script's "#!" line when it is a python (directly or through env). */
static int from_shebang(const char *cmd, const xfer_cfg_component_t *k, py_interp_t *py)
{
    char head[512], *nl, *w, *save = NULL, *word;
    int fd = open(cmd, O_RDONLY | O_CLOEXEC);
    ssize_t n;

    if (fd < 0)
        return 0;
    n = read(fd, head, sizeof head - 1);
    close(fd);
    if (n < 3 || head[0] != '#' || head[1] != '!')
        return 0;
    head[n] = '\0';
    if ((nl = strchr(head, '\n')))
        *nl = '\0';
    w = strtok_r(head + 2, " \t", &save);
    if (!w)
        return 0;
    if (python_name(w)) {
        py->path = xstrdup(w);
    } else {
        const char *base = strrchr(w, '/');
        if (strcmp(base ? base + 1 : w, "env") != 0)
            return 0;
        /* env [-S] [NAME=value ...] python3 [options] */
        while ((w = strtok_r(NULL, " \t", &save)) && (w[0] == '-' || strchr(w, '=')))
            ;
        if (!w || !python_name(w))
            return 0;
        py->path = strchr(w, '/') ? xstrdup(w) : find_in(w, component_path(k));
        if (!py->path)
            return 0;
    }
    while ((word = strtok_r(NULL, " \t", &save)))
        sv_push(&py->opts, word);
    py->script = xstrdup(cmd);
    py->dir = script_dir(cmd);
    return 1;
}

int python_of(const char *cmd, const xfer_cfg_component_t *k, py_interp_t *py)
{
    int i;

    memset(py, 0, sizeof *py);
    if (!python_name(cmd))
        return from_shebang(cmd, k, py);
    py->path = xstrdup(cmd);
    /* its options up to the script (or -m, -c, -), which is not part of the check */
    for (i = 1; i < k->argc; i++) {
        const char *a = k->argv[i];
        if (!strcmp(a, "-m") || !strcmp(a, "-c") || !strcmp(a, "-"))
            return 1; /* sys.path[0]: the working directory, as for the check's -c */
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        if (a[0] != '-')
            break;
        sv_push(&py->opts, a);
        if ((!strcmp(a, "-W") || !strcmp(a, "-X")) && i + 1 < k->argc)
            sv_push(&py->opts, k->argv[++i]);
    }
    if (i < k->argc)
        py->dir = script_dir(k->argv[i]);
    return 1;
}

void python_free(py_interp_t *py)
{
    free(py->path);
    free(py->script);
    free(py->dir);
    sv_free(&py->opts);
    memset(py, 0, sizeof *py);
}

/* ---- --check ------------------------------------------------------------------------------ */

/* Does the script change sys.path itself (as gray-scott-analysis-py does to find xfer)? */
static int script_sets_path(const char *script)
{
    char *text = xchecked(malloc(65536));
    int fd = open(script, O_RDONLY | O_CLOEXEC), found = 0;
    ssize_t n;

    if (fd >= 0) {
        n = read(fd, text, 65535);
        if (n > 0) {
            text[n] = '\0';
            found = strstr(text, "sys.path") != NULL;
        }
        close(fd);
    }
    free(text);
    return found;
}

/* Run @p argv with component @p k's env entries added, stdout and stderr into @p buf (at most
 * @p cap - 1 bytes kept), at most CHECK_TIMEOUT_MS. Returns the exit code, 128 + signal, or
 * -1 when it could not start or was killed at the timeout (@p buf says which). */
static int run_captured(char *const argv[], const xfer_cfg_component_t *k, char *buf, size_t cap)
{
    int p[2], st = 0, i, timed_out = 0;
    size_t len = 0;
    int64_t deadline = now_ms() + CHECK_TIMEOUT_MS;
    pid_t pid;

    buf[0] = '\0';
    if (cloexec_pipe(p) != 0) {
        snprintf(buf, cap, "pipe: %s", strerror(errno));
        return -1;
    }
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        snprintf(buf, cap, "fork: %s", strerror(errno));
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        int null = open("/dev/null", O_RDONLY);
        for (i = 0; i < k->nenv; i++)
            putenv(k->env[i]); /* the child's copy of the environment: NAME=value as given */
        if (null < 0 || dup2(null, 0) < 0 || dup2(p[1], 1) < 0 || dup2(p[1], 2) < 0)
            _exit(126);
        execv(argv[0], argv);
        dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(p[1]);
    for (;;) {
        struct pollfd pfd = {p[0], POLLIN, 0};
        int64_t left = deadline - now_ms();
        char sink[4096];
        ssize_t n;
        if (left <= 0) {
            timed_out = 1;
            kill(pid, SIGKILL);
            break;
        }
        if (poll(&pfd, 1, (int) left) < 0 && errno != EINTR)
            break;
        if (!pfd.revents)
            continue;
        n = read(p[0], len + 1 < cap ? buf + len : sink,
                 len + 1 < cap ? cap - 1 - len : sizeof sink);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (len + 1 < cap)
            len += (size_t) n;
    }
    buf[len] = '\0';
    close(p[0]);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (timed_out) {
        snprintf(buf, cap, "no answer in %d s", CHECK_TIMEOUT_MS / 1000);
        return -1;
    }
    return status_code(st);
}

/* The line of @p out that starts with @p key and a space (its rest, in new memory). */
static char *line_of(const char *out, const char *key)
{
    size_t klen = strlen(key);
    const char *p;

    for (p = out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, key, klen) == 0 && p[klen] == ' ')
            return xstrndup(p + klen + 1, strcspn(p + klen + 1, "\n"));
    return NULL;
}

/* The last non-empty line of @p out (new memory), for what an interpreter said as it died. */
static char *last_line(const char *out)
{
    const char *end = out + strlen(out), *start;

    while (end > out && (end[-1] == '\n' || end[-1] == ' '))
        end--;
    start = end;
    while (start > out && start[-1] != '\n')
        start--;
    return xstrndup(start, (size_t) (end - start));
}

/* Where the package xfer lives for this xfer-run: installed beside it, else this build tree. */
static const char *package_dir(const char *self_dir, char *buf, size_t cap)
{
#ifdef XFER_RUN_PYTHON_INSTALL_REL
    snprintf(buf, cap, "%s/" XFER_RUN_PYTHON_INSTALL_REL, self_dir);
    {
        char *init = xasprintf("%s/xfer/__init__.py", buf);
        int there = access(init, R_OK) == 0;
        free(init);
        if (there) {
            char *a = abs_path(buf), *r = realpath(a, NULL);
            snprintf(buf, cap, "%s", r ? r : a);
            free(a);
            free(r);
            return buf;
        }
    }
#endif
#ifdef XFER_RUN_PYTHON_BUILD_DIR
    (void) self_dir;
    snprintf(buf, cap, "%s", XFER_RUN_PYTHON_BUILD_DIR);
    return buf;
#else
    (void) self_dir;
    (void) buf;
    (void) cap;
    return NULL;
#endif
}

/* The fix for @p what (numpy | xfer) failing with @p why in interpreter @p py. */
static void print_fix(FILE *err, const char *at, const char *name, const py_interp_t *py,
                      const char *what, const char *why, const char *pkg)
{
#ifdef XFER_RUN_PYTHON
    const char *built = XFER_RUN_PYTHON;
#else
    const char *built = NULL;
#endif
    char *rp = realpath(py->path, NULL), *rb = built ? realpath(built, NULL) : NULL;
    int same = rp && rb && !strcmp(rp, rb);

    free(rp);
    free(rb);
    if (!strcmp(what, "xfer") && strstr(why, "No module named 'xfer'")) {
        fprintf(err,
                "%s: component %s: fix: set PYTHONPATH=%s (the package's directory) in "
                "xfer-run's environment or in the component's env\n",
                at, name, pkg ? pkg : "DIR");
        return;
    }
    if (built && !same) {
        fprintf(err,
                "%s: component %s: fix: run it with %s, the interpreter the package xfer was "
                "built for (write that path as the interpreter%s)",
                at, name, built,
                py->script ? " of the script's #! line, or put it first in cmd"
                           : " in the component's cmd");
        if (!strcmp(what, "numpy"))
            fprintf(err, ", or install numpy for %s (%s -m pip install numpy)", py->path, py->path);
        fputs("\n", err);
    } else if (!strcmp(what, "numpy")) {
        fprintf(err, "%s: component %s: fix: install numpy for %s (%s -m pip install numpy)\n", at,
                name, py->path, py->path);
    } else {
        fprintf(err,
                "%s: component %s: fix: rebuild the package xfer for this interpreter "
                "(cmake -DPython3_EXECUTABLE=%s)\n",
                at, name, py->path);
    }
}

/* Check component @p c's interpreter; 0 when it imports numpy and xfer (or is not Python). */
static int check_component(const xfer_config_t *cfg, int c, const char *at, const char *cmd,
                           const char *self_dir, FILE *out, FILE *err)
{
    const xfer_cfg_component_t *k = &cfg->components[c];
    py_interp_t py;
    strv_t argv = {NULL, 0, 0};
    char *buf = xchecked(malloc(CHECK_OUTPUT_MAX)), *who = NULL, *version = NULL, *fail = NULL;
    char *np = NULL, *xf = NULL, pkgbuf[PATH_MAX];
    const char *pkg;
    size_t i;
    int rc, bad = 0;

    if (!python_of(cmd, k, &py)) {
        free(buf);
        return 0;
    }
    sv_push(&argv, py.path);
    for (i = 0; i < py.opts.n; i++)
        sv_push(&argv, py.opts.v[i]);
    sv_push(&argv, "-c");
    sv_push(&argv, check_code);
    sv_push(&argv, py.dir ? py.dir : "");
    rc = run_captured(argv.v, k, buf, CHECK_OUTPUT_MAX);

    /* "python 3.11.2 /usr/bin/python3": what the interpreter says it is */
    version = line_of(buf, "python");
    if (version) {
        char *sp = strchr(version, ' ');
        if (sp) {
            *sp++ = '\0';
            who = strcmp(sp, py.path)
                      ? xasprintf("%s (Python %s, sys.executable %s)", py.path, version, sp)
                      : xasprintf("%s (Python %s)", py.path, version);
        }
    }
    if (!who)
        who = xstrdup(py.path);
    np = line_of(buf, "ok numpy");
    xf = line_of(buf, "ok xfer");
    fail = line_of(buf, "fail");
    pkg = package_dir(self_dir, pkgbuf, sizeof pkgbuf);
    if (rc == 0 && np && xf) {
        char *where = strchr(xf, ' ');
        if (where)
            *where++ = '\0';
        np[strcspn(np, " ")] = '\0'; /* "VERSION DIR": the version */
        fprintf(out, "%s: component %s: %s imports numpy %s and xfer %s from %s\n", at, k->name,
                who, np, xf, where ? where : "?");
    } else if (fail) {
        char *what = fail, *why = strchr(fail, ' ');
        if (why)
            *why++ = '\0';
        if (!strcmp(what, "xfer") && why && strstr(why, "No module named 'xfer'") && py.script &&
            script_sets_path(py.script)) {
            /* such a script (gray-scott-analysis-py) finds the package itself */
            if (np)
                np[strcspn(np, " ")] = '\0';
            fprintf(out,
                    "%s: component %s: %s imports numpy %s; xfer not checked: %s adds to "
                    "sys.path itself\n",
                    at, k->name, who, np ? np : "?", py.script);
        } else {
            fprintf(err, "%s: component %s: %s cannot import %s: %s\n", at, k->name, who, what,
                    why ? why : "?");
            print_fix(err, at, k->name, &py, what, why ? why : "", pkg);
            bad = 1;
        }
    } else if (rc < 0) { /* buf says why: it could not start, or did not answer */
        fprintf(err, "%s: component %s: %s: %s\n", at, k->name, who, buf);
        bad = 1;
    } else {
        char *last = last_line(buf);
        fprintf(err,
                "%s: component %s: %s exited with code %d before importing numpy and xfer: "
                "%s\n",
                at, k->name, who, rc, *last ? last : "no output");
        free(last);
        bad = 1;
    }
    free(version);
    free(who);
    free(np);
    free(xf);
    free(fail);
    free(buf);
    sv_free(&argv);
    python_free(&py);
    return bad;
}

int xfer_run_python_check(const xfer_config_t *cfg, const char *file, FILE *out, FILE *err)
{
    char *self = self_exe(), *self_dir, *config = abs_path(file), *yaml_dir = dir_of(config);
    int c, bad = 0;

    self_dir = dir_of(self);
    for (c = 0; c < cfg->ncomponents; c++) {
        const xfer_cfg_component_t *k = &cfg->components[c];
        char *why = NULL, *cmd = resolve_command(k->argv[0], self_dir, yaml_dir, &why);
        char *at = k->line > 0 ? xasprintf("%s:%d:%d", file, k->line, k->col) : xstrdup(file);
        if (cmd)
            bad += check_component(cfg, c, at, cmd, self_dir, out, err);
        else /* the launch would stop there; not for --check to refuse the file */
            fprintf(err, "%s: note: component %s: %s; not checked\n", at, k->name, why);
        free(at);
        free(why);
        free(cmd);
    }
    free(self);
    free(self_dir);
    free(config);
    free(yaml_dir);
    return bad;
}
