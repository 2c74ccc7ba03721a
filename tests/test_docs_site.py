"""The documentation site: generated pages are fresh, and MkDocs builds it strictly (no broken link or page)."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GENERATOR = ROOT / "scripts" / "docs" / "generate.py"


def load_generator():
    spec = importlib.util.spec_from_file_location("docs_generate", GENERATOR)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def generator():
    return load_generator()


def copy_docs(tmp_path: Path) -> Path:
    """What the generator reads and writes (README, docs, bench results, mkdocs.yml) under a scratch root."""
    root = tmp_path / "repo"
    shutil.copytree(ROOT / "docs", root / "docs")
    shutil.copytree(ROOT / "bench" / "results", root / "bench" / "results")
    shutil.copy(ROOT / "README.md", root / "README.md")
    shutil.copy(ROOT / "mkdocs.yml", root / "mkdocs.yml")
    return root


def test_generated_pages_are_fresh(generator):
    stale = generator.stale(ROOT)
    assert not stale, f"stale generated docs, run `python scripts/docs/generate.py`: {[str(p) for p in stale]}"


@pytest.mark.slow
def test_a_stale_page_fails_the_check(generator, tmp_path):
    root = copy_docs(tmp_path)
    cli = root / "docs" / "reference" / "cli.md"
    cli.write_text(cli.read_text().replace("Command-line reference", "Command line reference", 1))
    readme = root / "README.md"
    readme.write_text(readme.read_text().replace("| `basic` | return |", "| `basic` | score |", 1))
    assert set(generator.stale(root)) == {cli, readme}

    proc = subprocess.run(
        [sys.executable, str(GENERATOR), "--check", "--root", str(root)], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 1
    assert "docs/reference/cli.md" in proc.stderr and "README.md" in proc.stderr

    assert generator.main(["--root", str(root)]) == 0  # writing makes them fresh again
    assert generator.stale(root) == []


def test_an_unknown_generated_table_is_refused(generator, tmp_path):
    root = copy_docs(tmp_path)
    page = root / "docs" / "recording.md"
    page.write_text(page.read_text() + "\n<!-- generated: no-such-table -->\n<!-- end generated: no-such-table -->\n")
    with pytest.raises(SystemExit, match="no-such-table"):
        generator.outputs(root)


def mkdocs_build(root: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_site_builds_strictly(tmp_path):
    proc = mkdocs_build(ROOT, tmp_path / "site")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (tmp_path / "site" / "reference" / "cli" / "index.html").exists()


def test_a_broken_link_fails_the_build(tmp_path):
    root = copy_docs(tmp_path)
    page = root / "docs" / "training.md"
    page.write_text(page.read_text() + "\nSee [a page that is not there](no-such-page.md).\n")
    proc = mkdocs_build(root, tmp_path / "site")
    assert proc.returncode != 0
    assert "no-such-page.md" in proc.stderr
