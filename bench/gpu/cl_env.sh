# Sourced (from the repository root) by the GPU probe scripts: the OpenCL ICD loader and headers
# from .cl-debs/ unpacked into /tmp/lc-ocl, NVIDIA's driver registered through a vendors folder
# (the lent machine reaches no registry), $lc: lowconv from $LC_PREBUILT (else build/), and the
# time guard: `go SECONDS LABEL` fails once fewer than SECONDS of LIMIT_S are left.
ocl=/tmp/lc-ocl
mkdir -p $ocl/vendors
for f in .cl-debs/*.deb; do dpkg -x "$f" $ocl; done
echo libnvidia-opencl.so.1 > $ocl/vendors/nvidia.icd
export OCL_ICD_VENDORS=$ocl/vendors LOWCONV_OPENCL_LIBRARY=$ocl/usr/lib/x86_64-linux-gnu/libOpenCL.so.1
lc=$(cd "${LC_PREBUILT:-build}" && pwd)/lowconv
end=${end:-$(( $(date +%s) + ${LIMIT_S:-500} ))}
left() { echo $(( end - $(date +%s) )); }
go() { [ "$(left)" -ge "$1" ] || { echo "skipped: $2 (time)"; return 1; }; echo "== $2 ($(date +%T))"; }
