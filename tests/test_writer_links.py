"""Issue 21, class B: the one writer resolves the destination once, refuses another user's symbolic link in
a sticky folder (the kernel's protected_symlinks rule), applies the suffix rule to the file finally written,
and removes the temporary files a killed write left behind. Links and sticky folders live in tmp_path."""

from __future__ import annotations

import os
import time

import pytest

from kernels.errors import InputError
from kernels.io import writer
from tests.test_files import RENDER, one_error_line, run

OTHER_UID = 65534  # nobody


def sticky(folder):
    folder.mkdir()
    os.chmod(folder, 0o1777)
    return folder


def others_link(link, target):
    link.symlink_to(target)
    try:
        os.lchown(link, OTHER_UID, OTHER_UID)
    except (PermissionError, OSError) as exc:
        pytest.skip(f"cannot give a link to another user here ({exc.strerror}); needs root")
    if os.lstat(link).st_uid == os.geteuid():
        pytest.skip("running as uid 65534: the link is ours")
    return link


def test_another_users_link_in_a_sticky_folder_is_refused(tmp_path, capsys):
    tmp = sticky(tmp_path / "tmp")
    victim = tmp_path / "victim.png"
    victim.write_bytes(b"mine")
    link = others_link(tmp / "out.png", victim)
    code, _, err = run(capsys, *RENDER, "--out", link)
    line = one_error_line(err)
    assert code == 2 and "symbolic link owned by another user" in line and "--out" in line
    assert victim.read_bytes() == b"mine" and link.is_symlink()
    with pytest.raises(InputError, match="protected_symlinks"):
        writer.write_output(link, b"x", "test")
    assert victim.read_bytes() == b"mine"


def test_another_users_link_as_a_folder_on_the_way_is_refused(tmp_path):
    tmp = sticky(tmp_path / "tmp")
    real = tmp_path / "real"
    real.mkdir()
    others_link(tmp / "dir", real)
    with pytest.raises(InputError, match="owned by another user"):
        writer.write_output(tmp / "dir" / "x.csv", b"x", "--csv")
    assert list(real.iterdir()) == []


def test_own_link_in_a_sticky_folder_and_another_users_link_elsewhere_are_followed(tmp_path, capsys):
    tmp = sticky(tmp_path / "tmp")
    target = tmp_path / "real.png"
    (tmp / "mine.png").symlink_to(target)
    assert run(capsys, *RENDER, "--out", tmp / "mine.png")[0] == 0
    assert target.read_bytes()[:4] == b"\x89PNG"
    plain = tmp_path / "plain"
    plain.mkdir()  # not sticky: the rule does not apply (as the kernel's)
    link = others_link(plain / "theirs.png", target)
    target.unlink()
    assert run(capsys, *RENDER, "--out", link)[0] == 0 and target.exists()


def test_the_suffix_rule_applies_to_the_link_target(tmp_path, capsys):
    victim = tmp_path / "notes.txt"
    victim.write_text("keep me")
    link = tmp_path / "out.png"
    link.symlink_to(victim)
    code, _, err = run(capsys, *RENDER, "--out", link)
    assert code == 2 and "only .png files" in one_error_line(err) and "notes.txt" in err
    assert victim.read_text() == "keep me"
    with pytest.raises(InputError, match="only .csv"):
        writer.write_output(_link(tmp_path / "rows.csv", victim), b"a,b\n", "--csv", suffixes=(".csv",))
    assert victim.read_text() == "keep me"
    # a link with any name to a .png is the .png written
    png = tmp_path / "real.png"
    odd = _link(tmp_path / "image-link", png)
    assert run(capsys, *RENDER, "--out", odd)[0] == 0 and png.read_bytes()[:4] == b"\x89PNG" and odd.is_symlink()


def _link(link, target):
    link.symlink_to(target)
    return link


def test_a_link_loop_is_one_line(tmp_path):
    a, b = tmp_path / "a.png", tmp_path / "b.png"
    a.symlink_to(b)
    b.symlink_to(a)
    with pytest.raises(InputError, match="symbolic links"):
        writer.check_output(a, "--out")


def test_stale_temp_files_of_a_killed_write_are_removed_on_the_next_write(tmp_path):
    old = tmp_path / f"{writer.TEMP_PREFIX}0a1b2c3d-out.png"
    fresh = tmp_path / f"{writer.TEMP_PREFIX}9f8e7d6c-out.png"
    other = tmp_path / ".out.png.keep"  # not the writer's name
    unlike = tmp_path / f"{writer.TEMP_PREFIX}NOTHEX!!-out.png"
    for p in (old, fresh, other, unlike):
        p.write_bytes(b"partial")
    hour_ago = time.time() - 3600
    for p in (old, other, unlike):
        os.utime(p, (hour_ago, hour_ago))
    folder_link = tmp_path / f"{writer.TEMP_PREFIX}11223344-dir"
    folder_link.mkdir()
    os.utime(folder_link, (hour_ago, hour_ago))
    writer.write_output(tmp_path / "out.png", b"png", "--out", suffixes=(".png",))
    names = sorted(p.name for p in tmp_path.iterdir())
    assert old.name not in names
    assert {fresh.name, other.name, unlike.name, folder_link.name, "out.png"} <= set(names)


def test_a_failed_write_leaves_no_temp_file(tmp_path, monkeypatch):
    def boom(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(writer.os, "replace", boom)
    with pytest.raises(writer.WriteFailed, match="No space left"):
        writer.write_output(tmp_path / "x.csv", b"a", "--csv")
    assert list(tmp_path.iterdir()) == []
