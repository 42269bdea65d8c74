"""The package under test is the installed wheel (scripts/test sets OCCAM_EXPECT_INSTALLED to the
fresh virtual environment it installed it into): not python/occam of the checkout, and an
extension built for the stable ABI (abi3), which is what lets one wheel serve every Python >= 3.9."""

import os
import pathlib

import pytest

import occam
import occam._occam

EXPECTED = os.environ.get("OCCAM_EXPECT_INSTALLED")


@pytest.mark.skipif(not EXPECTED, reason="OCCAM_EXPECT_INSTALLED is not set (not run by scripts/test)")
def test_occam_is_the_installed_wheel_with_an_abi3_extension():
    root = pathlib.Path(EXPECTED).resolve()
    package = pathlib.Path(occam.__file__).resolve()
    extension = pathlib.Path(occam._occam.__file__).resolve()
    assert root in package.parents, f"occam imported from {package}, not from {root}"
    assert root in extension.parents, f"occam._occam imported from {extension}, not from {root}"
    assert extension.name.endswith(".abi3.so"), f"{extension.name} is not a stable-ABI extension"
