"""SiteFiles: every write lands inside the site, whatever the path or the links in the folder."""

from __future__ import annotations

import pytest

from llm_aai.view.files import SiteFiles, SiteWriteError, plain_relative


@pytest.fixture
def outside(tmp_path):
    """A folder beside the site, holding a file that must never change."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "precious.txt").write_text("precious")
    return folder


def _untouched(outside) -> None:
    assert sorted(p.name for p in outside.iterdir()) == ["precious.txt"]
    assert (outside / "precious.txt").read_text() == "precious"


def test_writes_land_in_the_site_with_their_folders_made(tmp_path):
    files = SiteFiles(tmp_path / "site")
    files.write_text("episode/run/ep.html", "<p>ü</p>")
    files.write_bytes("assets/site.css", b"body{}")
    assert (tmp_path / "site/episode/run/ep.html").read_text(encoding="utf-8") == "<p>ü</p>"
    assert (tmp_path / "site/assets/site.css").read_bytes() == b"body{}"


@pytest.mark.parametrize("relative", [
    "../precious.txt", "data/../../precious.txt", "data/link/../../../precious.txt",
    "/etc/passwd", "//etc/passwd", "data//x.png", "./x.png", "data/./x.png", "data/..",
    "", ".", "..", "data\\..\\..\\precious.txt", "x\0.png", "data/",
])
def test_a_path_that_is_not_plain_is_refused_and_named(tmp_path, outside, relative):
    files = SiteFiles(tmp_path / "site")
    with pytest.raises(SiteWriteError, match="not a plain path inside the site"):
        files.write_text(relative, "pwned")
    _untouched(outside)
    assert list((tmp_path / "site").iterdir()) == []


@pytest.mark.parametrize("linked", ["folder", "file", "dangling", "nested folder"])
def test_a_symlink_in_the_site_that_leads_out_is_not_written_through(tmp_path, outside,
                                                                       linked):
    site = tmp_path / "site"
    site.mkdir()
    relative = {"folder": "assets/site.css", "file": "index.html",
                "dangling": "index.html", "nested folder": "data/run/ep/frames/x.png"}[linked]
    if linked == "folder":
        (site / "assets").symlink_to(outside, target_is_directory=True)
    elif linked == "file":
        (site / "index.html").symlink_to(outside / "precious.txt")
    elif linked == "dangling":
        (site / "index.html").symlink_to(outside / "new.txt")
    else:
        (site / "data").symlink_to(outside, target_is_directory=True)
    with pytest.raises(SiteWriteError, match=f"{relative}: resolves to .*not inside the site"):
        SiteFiles(site).write_text(relative, "pwned")
    _untouched(outside)  # not even a folder made there


def test_copy_through_an_outside_link_is_refused(tmp_path, outside):
    site = tmp_path / "site"
    (site / "data").mkdir(parents=True)
    (site / "data" / "frame.png").symlink_to(outside / "precious.txt")
    origin = tmp_path / "frame.png"
    origin.write_bytes(b"\x89PNG fake frame")
    with pytest.raises(SiteWriteError, match="not inside the site"):
        SiteFiles(site).copy(origin, "data/frame.png")
    _untouched(outside)


def test_links_that_stay_inside_the_site_and_a_linked_site_folder_are_written(tmp_path):
    real_site = tmp_path / "real-site"
    (real_site / "assets").mkdir(parents=True)
    (real_site / "css").symlink_to(real_site / "assets", target_is_directory=True)
    named = tmp_path / "site"
    named.symlink_to(real_site, target_is_directory=True)  # the user's own choice of --out
    files = SiteFiles(named)
    files.write_text("css/site.css", "body{}")
    assert (real_site / "assets/site.css").read_text() == "body{}"


def test_copy_skips_a_copy_of_the_same_size(tmp_path):
    origin = tmp_path / "frame.png"
    origin.write_bytes(b"12345")
    files = SiteFiles(tmp_path / "site")
    assert files.copy(origin, "data/frame.png") is True
    assert files.copy(origin, "data/frame.png") is False
    origin.write_bytes(b"123456")
    assert files.copy(origin, "data/frame.png") is True
    assert (tmp_path / "site/data/frame.png").read_bytes() == b"123456"


@pytest.mark.parametrize(("path", "plain"), [
    ("frames/turn-001-0.png", True), ("frames/a b#?%ü.png", True), ("x", True),
    ("../x", False), ("a/../x", False), ("/x", False), ("a//x", False), ("a\\x", False),
    ("a/", False), ("./x", False), ("", False), ("x\0", False),
])
def test_plain_relative(path, plain):
    assert plain_relative(path) is plain


def test_a_link_to_the_site_folder_itself_is_no_file_to_write(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").symlink_to(site, target_is_directory=True)
    with pytest.raises(SiteWriteError, match="index.html: resolves to .*not inside the site"):
        SiteFiles(site).write_text("index.html", "<p>")
