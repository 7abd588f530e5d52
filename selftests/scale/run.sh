#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The scale tests (`make scale`; in the test VM, as root, from the
# repository root). Each load of kfdsim runs build/selftests/scale_test
# with KFDSIM_SCALE naming the tests that fit it:
#   num_gpus=2 vram_mb=256:   bos, short
#   num_gpus=8 vram_mb=256:   gpus
#   num_gpus=1 vram_mb=$KFDSIM_SCALE_BIG_MB + 64:  big
# The counters must be back to 0 before each unload. The last line is
# "N passed, N failed"; the exit status is 0 only if nothing failed.

set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=selftests/lib/ksft-lib.sh
. "$top/selftests/lib/ksft-lib.sh"
big=${KFDSIM_SCALE_BIG_MB:-2048}

# scale NUM_GPUS VRAM_MB TESTS
scale() {
	ko=${KFDSIM_KO:-./kfdsim.ko}
	modprobe drm
	if ! insmod "$ko" num_gpus="$1" vram_mb="$2" seed=0; then
		result 1 "insmod num_gpus=$1 vram_mb=$2"
		return
	fi
	echo "# ---- scale_test KFDSIM_SCALE=$3 (num_gpus=$1 vram_mb=$2)"
	KFDSIM_SCALE=$3 timeout -k 10 3600 "$top/build/selftests/scale_test"
	result $? "scale_test $3 (num_gpus=$1 vram_mb=$2)"
	unload "$3"
}

scale 2 256 bos,short
scale 8 256 gpus
scale 1 $((big + 64)) big
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
