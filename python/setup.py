"""Builds libqjit with the repository's CMake (the folder above this one)
and bundles it with the package: qjit/_native/lib/libqjit.so and
qjit/_native/share/qjit/templates, the layout in which the library finds its
templates (`cmake --install --component runtime`). QJIT_PREFIX instead
bundles an installed qjit (cmake --install ... --prefix P); QJIT_BUILD_DIR
names the CMake build folder (default: build-python in the repository)."""
import glob
import os
import shutil
import subprocess
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _bundle_prefix(prefix, target):
    libs = sorted(glob.glob(str(Path(prefix) / "lib*" / "libqjit.so*")))
    templates = Path(prefix) / "share" / "qjit" / "templates"
    if not libs or not (templates / "dispatch.lua").is_file():
        raise SystemExit(f"qjit: {prefix} holds no installed libqjit.so and share/qjit/templates")
    (target / "lib").mkdir(parents=True, exist_ok=True)
    for f in libs:
        shutil.copy2(f, target / "lib", follow_symlinks=True)
    shutil.copytree(templates, target / "share" / "qjit" / "templates", dirs_exist_ok=True)
    _one_library(target)


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        target = Path(self.build_lib) / "qjit" / "_native"
        if target.exists():
            shutil.rmtree(target)
        prefix = os.environ.get("QJIT_PREFIX")
        if prefix:
            _bundle_prefix(prefix, target)
            return
        if not (ROOT / "CMakeLists.txt").is_file() or not (ROOT / "include" / "qjit.h").is_file():
            raise SystemExit("qjit: not inside the qjit repository; set QJIT_PREFIX to an installed qjit")
        build = Path(os.environ.get("QJIT_BUILD_DIR") or ROOT / "build-python")
        env = dict(os.environ)
        cuda = env.get("CUDA_HOME", "/usr/local/cuda")
        if os.path.isdir(os.path.join(cuda, "bin")):
            env["PATH"] = os.path.join(cuda, "bin") + os.pathsep + env.get("PATH", "")
        subprocess.check_call(["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                               "-DQJIT_BUILD_TESTS=OFF"], env=env)
        subprocess.check_call(["cmake", "--build", str(build), "--target", "qjit", "-j", str(os.cpu_count() or 2)],
                              env=env)
        subprocess.check_call(["cmake", "--install", str(build), "--prefix", str(target), "--component", "runtime"],
                              env=env)
        _one_library(target)


def _one_library(target):
    """One file, lib/libqjit.so (a wheel would hold each symlink as a copy)."""
    libdir = next(Path(target).glob("lib*"))
    real = max(libdir.glob("libqjit.so*"), key=lambda p: len(p.name)).resolve()
    data = real.read_bytes()
    for f in libdir.glob("libqjit.so*"):
        f.unlink()
    (libdir / "libqjit.so").write_bytes(data)
    (libdir / "libqjit.so").chmod(0o755)


class BinaryDistribution(Distribution):
    """The wheel carries a native library: platform-specific."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithLibrary}, distclass=BinaryDistribution)
