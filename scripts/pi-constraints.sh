#!/usr/bin/env bash
# Print pip constraints that keep a venv made with --system-site-packages compatible with the OS's
# picamera2: numpy stays at the version picamera2 (and simplejpeg) were compiled against, since a
# numpy 2 in the venv makes `import picamera2` fail with "numpy.dtype size changed"; OpenCV 4.12
# and later need numpy 2, so with the OS's numpy 1.x, OpenCV stays below it.
# Prints nothing where the OS has no numpy (a laptop).
set -uo pipefail
if sys_numpy="$(/usr/bin/python3 -c 'import numpy; print(numpy.__version__)' 2>/dev/null)"; then
    echo "numpy==$sys_numpy"
    case "$sys_numpy" in
        1.*) echo "opencv-python-headless<4.12" ;;
    esac
fi
