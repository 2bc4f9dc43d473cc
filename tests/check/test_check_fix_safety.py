"""--fix must never make things worse: links, imports the shim cannot prove, a project's own
`compat`, files changed under it, read-only files and directories."""
import errno
import os
import stat
import textwrap

import pytest

from compat._check import engine, fix
from compat.check import main

LEGACY = "import tensorflow as tf\nq = tf.train.string_input_producer(files)\n"
FIXED = "import compat.v1 as tf\nq = tf.train.string_input_producer(files)\n"


def _fix_once(tmp_path, source: str) -> bytes:
    path = tmp_path / "module.py"
    path.write_bytes(source.encode("utf-8"))
    edit = fix.plan(engine.check_file(str(path)))
    return source.encode("utf-8") if edit is None or not edit.after else edit.after


def _skipped(tmp_path, source: str) -> tuple:
    path = tmp_path / "module.py"
    path.write_text(textwrap.dedent(source).lstrip("\n"))
    return fix.plan(engine.check_file(str(path))).skipped


# --- imports the shim cannot prove resolve ----------------------------------------------------

UNPROVABLE_FIX_CASES = [
    pytest.param(
        """
        import tensorflow as tf
        from tensorflow.examples.tutorials.mnist import input_data
        q = tf.train.string_input_producer(files)
        """,
        """
        import compat.v1 as tf
        from tensorflow.examples.tutorials.mnist import input_data
        q = tf.train.string_input_producer(files)
        """, id="from-examples-left"),
    pytest.param(
        """
        import tensorflow as tf
        import tensorflow.examples.tutorials.mnist.input_data as input_data
        from tensorflow import examples
        import tensorflow.compat.v2 as tf2
        from tensorflow.estimator import Estimator
        q = tf.train.string_input_producer(files)
        """,
        """
        import compat.v1 as tf
        import tensorflow.examples.tutorials.mnist.input_data as input_data
        from tensorflow import examples
        import tensorflow.compat.v2 as tf2
        from tensorflow.estimator import Estimator
        q = tf.train.string_input_producer(files)
        """, id="examples-v2-estimator-left"),
    pytest.param(
        """
        import tensorflow.train as train
        from tensorflow.train import queue_runner
        train.batch([x], 2)
        """,
        """
        import compat.v1.train as train
        from compat.v1.train import queue_runner
        train.batch([x], 2)
        """, id="known-v1-modules-still-rewritten"),
]

UNPROVABLE_NOOP_CASES = [
    pytest.param("import tensorflow\nfrom tensorflow.examples.tutorials.mnist import input_data\n"
                 "tensorflow.train.batch([x], 2)\n", id="from-examples"),
    pytest.param("import tensorflow.examples.tutorials.mnist.input_data as input_data\n"
                 "import tensorflow\ntensorflow.train.batch([x], 2)\n", id="import-examples-as"),
    pytest.param("from tensorflow import examples\nimport tensorflow\n"
                 "tensorflow.train.batch([x], 2)\n", id="from-tensorflow-import-examples"),
    pytest.param("import tensorflow.compat.v2 as tf\nimport tensorflow\n"
                 "tensorflow.train.batch([x], 2)\n", id="compat-v2"),
]


@pytest.mark.parametrize("before,after", UNPROVABLE_FIX_CASES)
def test_fix_unprovable_imports(tmp_path, before, after):
    before, after = textwrap.dedent(before).lstrip("\n"), textwrap.dedent(after).lstrip("\n")
    assert _fix_once(tmp_path, before).decode() == after


@pytest.mark.parametrize("before,after", UNPROVABLE_FIX_CASES)
def test_fix_unprovable_imports_is_idempotent(tmp_path, before, after):
    fixed = _fix_once(tmp_path, textwrap.dedent(before).lstrip("\n")).decode()
    assert _fix_once(tmp_path, fixed).decode() == fixed


@pytest.mark.parametrize("source", UNPROVABLE_NOOP_CASES)
def test_fix_unprovable_imports_noop(tmp_path, source):
    assert _fix_once(tmp_path, source).decode() == source


def test_examples_import_says_why_and_suggests_nothing_wrong(tmp_path):
    skipped = _skipped(tmp_path, """
        import tensorflow as tf
        from tensorflow.examples.tutorials.mnist import input_data
        import tensorflow.examples.tutorials.mnist.input_data
        q = tf.train.string_input_producer(files)
        """)
    assert any("tensorflow.examples.tutorials.mnist` left as is: tf.compat.v1 has no module "
               "examples.tutorials.mnist" in reason for reason in skipped), skipped
    assert not any("compat.v1.examples" in reason and "use `import" in reason
                   for reason in skipped), skipped


def test_cli_fix_leaves_examples_import(tmp_path, capsys):
    path = tmp_path / "mnist.py"
    path.write_text("import tensorflow as tf\n"
                    "from tensorflow.examples.tutorials.mnist import input_data\n"
                    "q = tf.train.string_input_producer(files)\n")
    assert main(["--fix", "-q", str(tmp_path)]) == 0
    assert path.read_text() == ("import compat.v1 as tf\n"
                                "from tensorflow.examples.tutorials.mnist import input_data\n"
                                "q = tf.train.string_input_producer(files)\n")
    assert "compat.v1.examples" not in path.read_text()
    assert "left as is: tf.compat.v1 has no module" in capsys.readouterr().err


# --- symlinks and hard links ---------------------------------------------------------------

def test_symlink_is_written_through_and_stays_a_link(tmp_path, capsys):
    tree = tmp_path / "src"
    tree.mkdir()
    target = tree / "real.py"
    target.write_text(LEGACY)
    link = tree / "alias.py"
    link.symlink_to("real.py")
    assert main(["--fix", "-q", str(tree)]) == 0
    assert link.is_symlink() and os.readlink(link) == "real.py"
    assert target.read_text() == FIXED and not target.is_symlink()
    err = capsys.readouterr().err
    assert "the same file as" in err and "rewritten once" in err
    assert "Fixed 1 file " in err
    assert not [p for p in tree.iterdir() if p.name.startswith(".compat-check-")]


def test_symlink_given_explicitly_is_written_through(tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "real.py").write_text(LEGACY)
    link = tmp_path / "train.py"
    link.symlink_to(outside / "real.py")
    assert main(["--fix", "-q", str(link)]) == 0
    assert link.is_symlink()
    assert (outside / "real.py").read_text() == FIXED


def test_symlink_out_of_the_checked_tree_is_refused(tmp_path, capsys):
    outside = tmp_path / "vendor"
    outside.mkdir()
    (outside / "shared.py").write_text(LEGACY)
    tree = tmp_path / "src"
    tree.mkdir()
    (tree / "shared.py").symlink_to(outside / "shared.py")
    (tree / "own.py").write_text(LEGACY)
    assert main(["--fix", "-q", str(tree)]) == 2
    assert (outside / "shared.py").read_text() == LEGACY
    assert (tree / "shared.py").is_symlink()
    assert (tree / "own.py").read_text() == FIXED  # the run went on
    err = capsys.readouterr().err
    assert "shared.py: refused: a symbolic link to" in err
    assert "outside the checked paths" in err
    assert "Fixed 1 file" in err and "refused 1 file" in err


def test_hard_link_is_kept(tmp_path):
    tree = tmp_path / "src"
    tree.mkdir()
    first = tree / "train.py"
    first.write_text(LEGACY)
    os.chmod(first, 0o640)
    second = tmp_path / "copy_elsewhere.py"
    os.link(first, second)
    inode = os.stat(first).st_ino
    assert main(["--fix", "-q", str(tree)]) == 0
    assert os.stat(first).st_ino == inode == os.stat(second).st_ino
    assert os.stat(first).st_nlink == 2
    assert second.read_text() == FIXED == first.read_text()
    assert stat.S_IMODE(os.stat(first).st_mode) == 0o640


def test_single_link_file_is_replaced_atomically_keeping_mode(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(LEGACY)
    os.chmod(path, 0o751)
    assert main(["--fix", "-q", str(tmp_path)]) == 0
    assert path.read_text() == FIXED
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o751


# --- a project's own `compat` ------------------------------------------------------------------

def _project(tmp_path, marker=True):
    project = tmp_path / "proj"
    (project / "pkg" / "sub").mkdir(parents=True)
    if marker:
        (project / "setup.py").write_text("")
    script = project / "pkg" / "sub" / "train.py"
    script.write_text(LEGACY)
    return project, script


@pytest.mark.parametrize("where", ["next-to-file", "project-root", "package"])
def test_own_compat_module_refuses_the_rewrite(tmp_path, capsys, where):
    project, script = _project(tmp_path)
    if where == "next-to-file":
        own = script.parent / "compat.py"
        own.write_text("import six\n")
    elif where == "project-root":
        own = project / "compat.py"
        own.write_text("PY2 = False\n")
    else:
        (project / "compat").mkdir()
        (project / "compat" / "__init__.py").write_text("")
        own = project / "compat"
    assert main(["--fix", "-q", str(project / "pkg")]) == 2
    assert script.read_text() == LEGACY
    err = capsys.readouterr().err
    assert f"{own} is this project's own `compat` module" in err
    assert "`import compat.v1` would import it instead of the shim" in err
    # --diff previews the same refusal, and shows no diff for it
    assert main(["--diff", str(project / "pkg")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "refused" in captured.err and "own `compat` module" in captured.err


def test_own_compat_found_up_to_the_given_path_without_project_root(tmp_path, capsys):
    project, script = _project(tmp_path, marker=False)
    (project / "compat.py").write_text("")
    assert main(["--fix", "-q", str(project)]) == 2
    assert script.read_text() == LEGACY


def test_compat_outside_the_project_is_not_a_clash(tmp_path):
    project, script = _project(tmp_path)
    (tmp_path / "compat.py").write_text("")  # above the project root: not on its path
    (project / "pkg" / "compat").mkdir()      # a namespace directory does not shadow the shim
    assert main(["--fix", "-q", str(project)]) == 0
    assert script.read_text() == FIXED


def test_the_shim_itself_is_not_a_clash(tmp_path, monkeypatch):
    project, script = _project(tmp_path)
    (project / "compat").mkdir()
    (project / "compat" / "__init__.py").write_text("")
    monkeypatch.setattr(fix, "_SHIM_PACKAGE", str(project / "compat"))
    assert main(["--fix", "-q", str(project)]) == 0
    assert script.read_text() == FIXED


# --- concurrent edits ----------------------------------------------------------------------

def _edit_after_planning(monkeypatch, victim, new_text, keep_stat=False):
    real_plan = fix._plan

    def plan_then_edit(report, max_size):
        result = real_plan(report, max_size)
        if os.path.basename(report.path) == victim.name:
            before = os.stat(victim)
            victim.write_text(new_text)  # someone saves the file in an editor meanwhile
            if keep_stat:
                os.utime(victim, ns=(before.st_atime_ns, before.st_mtime_ns))
        return result

    monkeypatch.setattr(fix, "_plan", plan_then_edit)


@pytest.mark.parametrize("keep_stat", [False, True], ids=["mtime-changes", "same-size-and-mtime"])
def test_file_changed_after_it_was_read_is_refused(tmp_path, monkeypatch, capsys, keep_stat):
    victim = tmp_path / "a.py"
    victim.write_text(LEGACY)
    other = tmp_path / "b.py"
    other.write_text(LEGACY)
    edited = LEGACY.replace("files", "FILES")  # same size
    _edit_after_planning(monkeypatch, victim, edited, keep_stat)
    assert main(["--fix", "-q", str(tmp_path)]) == 2
    assert victim.read_text() == edited  # the concurrent edit is not lost
    assert other.read_text() == FIXED
    err = capsys.readouterr().err
    assert "a.py: refused: " in err and "changed since it was read" in err
    assert "Fixed 1 file" in err and "refused 1 file" in err


def test_file_changed_while_being_checked_is_refused(tmp_path, monkeypatch, capsys):
    victim = tmp_path / "a.py"
    victim.write_text(LEGACY)
    real_check = engine.check_file

    def check_then_edit(path):
        report = real_check(path)
        with open(path, "a") as handle:
            handle.write("# edited meanwhile\n")
        return report

    monkeypatch.setattr(engine, "check_file", check_then_edit)
    assert main(["--fix", "-q", str(tmp_path)]) == 2
    assert victim.read_text() == LEGACY + "# edited meanwhile\n"
    assert "changed while it was being checked" in capsys.readouterr().err


def test_file_replaced_after_it_was_read_is_refused(tmp_path, monkeypatch, capsys):
    victim = tmp_path / "a.py"
    victim.write_text(LEGACY)
    real_plan = fix._plan

    def plan_then_replace(report, max_size):
        result = real_plan(report, max_size)
        replacement = tmp_path / "new.tmp"
        replacement.write_text(LEGACY)
        os.replace(replacement, victim)  # an editor's atomic save: a new inode
        return result

    monkeypatch.setattr(fix, "_plan", plan_then_replace)
    assert main(["--fix", "-q", str(victim)]) == 2
    assert victim.read_text() == LEGACY
    assert "replaced since it was read" in capsys.readouterr().err


# --- read-only files and directories, failing writes --------------------------------------

def test_read_only_file_is_refused_and_the_run_goes_on(tmp_path, capsys):
    locked = tmp_path / "a.py"
    locked.write_text(LEGACY)
    os.chmod(locked, 0o444)  # no write bit: refused even for root
    (tmp_path / "b.py").write_text(LEGACY)
    assert main(["--fix", "-q", str(tmp_path)]) == 2
    assert locked.read_text() == LEGACY
    assert (tmp_path / "b.py").read_text() == FIXED
    captured = capsys.readouterr()
    assert "a.py: refused: the file is read-only" in captured.err
    assert "internal error" not in captured.err
    # the report still comes, of the tree as --fix left it: b.py on the shim, a.py not
    assert "2 queue API sites in 2 files" in captured.out
    assert "by stage: 1 legacy (TF1 queues), 1 on the shim (compat.v1)" in captured.out


def test_read_only_directory_refuses_the_run_before_any_write(tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "a.py").write_text(LEGACY)
    (tmp_path / "b.py").write_text(LEGACY)
    (tmp_path / "c.py").write_text(LEGACY)
    os.chmod(locked, 0o555)
    try:
        assert main(["--fix", "-q", str(tmp_path)]) == 2
        assert (locked / "a.py").read_text() == LEGACY
        assert not list(locked.glob(".compat-check-*"))
        # all or nothing: b.py and c.py, writable, are not written either
        assert (tmp_path / "b.py").read_text() == LEGACY
        assert (tmp_path / "c.py").read_text() == LEGACY
        err = capsys.readouterr().err
        reason = ("is read-only, and --fix writes all of a run's files or none (make it "
                  "writable, or --exclude it)")
        for name in ("locked/a.py", "b.py", "c.py"):
            assert f"{name}: refused: not written: " in err and reason in err
        assert "Fixed 0 files (0 with legacy sites left unchanged); refused 3 files" in err
        assert "internal error" not in err
        # --diff only previews: a read-only tree is no reason to refuse it
        assert main(["--diff", "-q", str(tmp_path)]) == 1
        assert "+import compat.v1 as tf" in capsys.readouterr().out
        # the directory excluded, the run writes the rest
        assert main(["--fix", "-q", "--exclude", "locked", str(tmp_path)]) == 0
        assert (tmp_path / "b.py").read_text() == FIXED
    finally:
        os.chmod(locked, 0o755)


def test_not_writable_for_this_user_is_refused(tmp_path, monkeypatch, capsys):
    """Write bits set, but not ours to write (another owner): os.access says no."""
    path = tmp_path / "a.py"
    path.write_text(LEGACY)
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if os.fspath(p) == str(path)
                        else real_access(p, mode, **kw))
    assert main(["--fix", "-q", str(tmp_path)]) == 2
    assert path.read_text() == LEGACY
    assert "a.py: refused: the file is read-only" in capsys.readouterr().err


@pytest.mark.parametrize("hard_link", [False, True])
def test_failing_write_is_refused_not_an_internal_error(tmp_path, monkeypatch, capsys, hard_link):
    tree = tmp_path / "src"
    tree.mkdir()
    bad = tree / "a.py"
    bad.write_text(LEGACY)
    if hard_link:
        os.link(bad, tmp_path / "a_link.py")
    (tree / "b.py").write_text(LEGACY)
    real_replace, real_open = os.replace, os.open

    def replace(src, dst, **kw):
        if os.fspath(dst) == str(bad):
            raise PermissionError(errno.EACCES, "Permission denied", str(dst))
        return real_replace(src, dst, **kw)

    def open_(path, flags, *args, **kw):
        if os.fspath(path) == str(bad) and flags & os.O_RDWR:
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return real_open(path, flags, *args, **kw)

    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(os, "open", open_)
    assert main(["--fix", "-q", str(tree)]) == 2
    assert bad.read_text() == LEGACY
    assert (tree / "b.py").read_text() == FIXED
    assert not list(tree.glob(".compat-check-*"))
    err = capsys.readouterr().err
    reason = "Read-only file system" if hard_link else "Permission denied"
    assert f"a.py: refused: not written: {reason}" in err
    assert "internal error" not in err
    assert "Fixed 1 file (0 with legacy sites left unchanged); refused 1 file" in err


# --- exit codes of --fix ----------------------------------------------------------------------

def test_fix_exit_codes(tmp_path):
    path = tmp_path / "a.py"
    path.write_text(LEGACY)
    # rewritten, then checked again: its sites are on the shim, which --fail-on legacy passes
    assert main(["--fix", "-q", str(path)]) == 0
    assert main(["--fix", "-q", "--fail-on", "shim", str(path)]) == 1
    path.write_text(LEGACY)
    assert main(["--diff", "-q", str(path)]) == 1         # --diff writes nothing: still legacy
    assert main(["--fix", "-q", "--exit-zero", str(path)]) == 0
    assert path.read_text() == FIXED
    path.write_text(LEGACY)
    os.chmod(path, 0o444)
    assert main(["--fix", "-q", "--exit-zero", str(path)]) == 2  # a refusal is an error
    (tmp_path / "clean.py").write_text("x = 1\n")
    assert main(["--fix", "-q", str(tmp_path / "clean.py")]) == 0


def test_fix_on_a_non_utf8_file_name(tmp_path, capsys):
    try:
        path = os.path.join(os.fsencode(str(tmp_path)), b"caf\xe9.py")
        with open(path, "wb") as handle:
            handle.write(LEGACY.encode())
    except (OSError, UnicodeError):
        pytest.skip("this file system only takes UTF-8 file names")
    assert main(["--fix", "-q", str(tmp_path)]) == 0
    with open(path, "rb") as handle:
        assert handle.read() == FIXED.encode()
    err = capsys.readouterr().err
    assert "caf\\xe9.py: import tensorflow as tf -> import compat.v1 as tf" in err

