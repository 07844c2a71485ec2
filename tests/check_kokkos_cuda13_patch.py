#!/usr/bin/python3
"""scripts/kokkos-cuda13-patch on stand-in Kokkos trees (the two wrapper lines it edits, as Kokkos
4.6 writes them): patched once, each call's CUDA 13 form under CUDART_VERSION >= 13000 and the old
form kept; a second run changes nothing; a tree with the CUDA 13 forms already (Kokkos >= 4.7.01)
is left alone; a header without the lines, or no header, is refused with exit 2.
"""
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "kokkos-cuda13-patch")
LINES = ("  cudaError_t wrap() const {\n"
         "    return cudaGraphAddDependencies(graph, from, to, numDependencies);\n"
         "  }\n  cudaError_t prefetch() const {\n"
         "    return cudaMemPrefetchAsync(devPtr, count, dstDevice, m_stream);\n  }\n")


def tree(root, text):
    d = os.path.join(root, "core", "src", "Cuda")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "Kokkos_Cuda_Instance.hpp")
    if text is not None:
        with open(path, "w") as f:
            f.write(text)
    return path


def run(root):
    return subprocess.run([sys.executable, SCRIPT, root], capture_output=True, text=True).returncode


def main():
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        a = os.path.join(tmp, "a")
        path = tree(a, LINES)
        if run(a) != 0:
            failures.append("the 4.6 stand-in was not patched (exit != 0)")
        text = open(path).read()
        for want in ("cudaGraphAddDependencies(graph, from, to, nullptr, numDependencies)",
                     "cudaMemPrefetchAsync(devPtr, count, location, 0, m_stream)",
                     "cudaMemPrefetchAsync(devPtr, count, dstDevice, m_stream)", "#else", "#endif"):
            if want not in text:
                failures.append("patched header lacks: " + want)
        if text.count("#if CUDART_VERSION >= 13000") != 2:
            failures.append("expected two CUDA 13 guards, found %d" % text.count("#if CUDART_VERSION >= 13000"))
        if run(a) != 0 or open(path).read() != text:
            failures.append("a second run changed the patched header or failed")
        b = os.path.join(tmp, "b")
        newer = "#if CUDART_VERSION >= 13000\n" + LINES + "#endif\n"
        path_b = tree(b, newer)
        if run(b) != 0 or open(path_b).read() != newer:
            failures.append("a header with the CUDA 13 forms was changed or refused")
        c = os.path.join(tmp, "c")
        tree(c, "  return cudaSomethingElse();\n")
        if run(c) != 2:
            failures.append("a header without the wrapper lines was not refused with exit 2")
        d = os.path.join(tmp, "d")
        tree(d, None)
        if run(d) != 2:
            failures.append("a tree without the header was not refused with exit 2")
    for f in failures:
        print("check_kokkos_cuda13_patch: FAIL: " + f)
    if not failures:
        print("check_kokkos_cuda13_patch: ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
