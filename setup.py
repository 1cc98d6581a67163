"""The wheel's build: the package, and the kernels of 7x6 and the boards with a
network compiled for a baseline CPU.

``c4engine/kernel/portable.py`` says why and how the compiled kernels are used.
They are compiled by ``c4engine warm-up --shipped`` run on the built
package, with ``C4ENGINE_PORTABLE_BUILD`` naming its kernel folder, in the
build's environment (numba is a build requirement: the code fits the numba
version built with, and elsewhere numba compiles as before).  The wheel is then
for this Python and platform.  ``C4ENGINE_SHIP_KERNEL=0`` builds a pure wheel
without it."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

SHIP_KERNEL = os.environ.get("C4ENGINE_SHIP_KERNEL") != "0"


class BuildWithPortableKernel(build_py):
    """build_py, then the portable kernel compiled into the built package."""

    def run(self) -> None:
        super().run()
        if SHIP_KERNEL and not self.dry_run:
            compile_portable_kernel(Path(self.build_lib).resolve())


def compile_portable_kernel(build_lib: Path) -> None:
    """Compile the shipped boards' kernels for the baseline CPU into ``build_lib``'s package, with
    numba's and the kernel's caches kept out of it."""
    with tempfile.TemporaryDirectory() as scratch:
        # build_lib goes first on PYTHONPATH, kept: pip's isolated build puts its own
        # entry there, through which the build's numba, numpy and click are found.
        path = os.pathsep.join(filter(None, [str(build_lib), os.environ.get("PYTHONPATH")]))
        env = {**os.environ, "PYTHONPATH": path, "PYTHONDONTWRITEBYTECODE": "1",
               "C4ENGINE_PORTABLE_BUILD": str(build_lib / "c4engine" / "kernel"),
               "NUMBA_CACHE_DIR": str(Path(scratch) / "numba"), "C4ENGINE_KERNEL_CACHE": str(Path(scratch) / "kernels")}
        for name in ("NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES", "C4ENGINE_PORTABLE"):
            env.pop(name, None)
        subprocess.run([sys.executable, "-m", "c4engine", "warm-up", "--shipped"], env=env, check=True, cwd=scratch)


class CompiledKernelDistribution(Distribution):
    """A wheel carrying compiled code is for one Python and platform."""

    def has_ext_modules(self) -> bool:
        return SHIP_KERNEL


setup(cmdclass={"build_py": BuildWithPortableKernel}, distclass=CompiledKernelDistribution)
