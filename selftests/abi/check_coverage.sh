#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Fail when a kfd_ioctl.h defines something the ABI test does not look at.
#
# usage: check_coverage.sh UPSTREAM_HEADER PROJECT_HEADER
#
# Every struct, member, enum, enumerator and macro of upstream's header must
# be an item of abi_list.h. The project header's must be there too or, for
# what only the project has, be used by abi_test.c.

set -eu

here=$(dirname "$0")
list="$here/abi_list.h"
test_c="$here/abi_test.c"
CC=${CC:-cc}

# Print "struct T", "field T M", "enum T", "const N" and "macro N" lines for
# a header, comments removed by the compiler (no macro expansion).
items() {
	"$CC" -fpreprocessed -dD -E -P "$1" | awk '
	function flush(   n, w) {
		sub(/\[.*/, "", buf)
		sub(/;.*/, "", buf)
		sub(/[ \t]+$/, "", buf)
		n = split(buf, w, /[ \t]+/)
		if (n > 0 && w[n] != "")
			print "field " tag " " w[n]
		buf = ""
	}
	/^#define[ \t]/ {
		name = $2
		sub(/\(.*/, "", name)
		if (name !~ /_H_INCLUDED$/)
			print "macro " name
		next
	}
	/^#/ { next }
	kind == "" && /^(__extension__[ \t]+)?(struct|enum)[ \t]+[A-Za-z_0-9]+[ \t]*\{/ {
		line = $0
		sub(/^__extension__[ \t]+/, "", line)
		split(line, w, /[ \t{]+/)
		kind = w[1]
		tag = w[2]
		print kind " " tag
		depth = 1
		buf = ""
		next
	}
	kind == "enum" {
		if ($0 ~ /}/) {
			kind = ""
			next
		}
		line = $0
		sub(/^[ \t]+/, "", line)
		sub(/[ \t=,].*/, "", line)
		if (line != "")
			print "const " line
		next
	}
	kind == "struct" {
		if ($0 ~ /{/) {		# nested anonymous union or struct
			depth++
			next
		}
		if ($0 ~ /^[ \t]*}/) {
			buf = ""
			if (--depth == 0)
				kind = ""
			next
		}
		buf = buf " " $0
		if (buf ~ /;/)
			flush()
	}'
}

# Is item "$1 $2 [$3]" named by the ABI list (or the test, for macros and
# constants, and with $4 set for anything)?
covered() {
	case $1 in
	struct)	grep -Eq "^ABI_STRUCT\([a-z]+, $2\)" "$list" ;;
	enum)	grep -Eq "^ABI_ENUM\([a-z]+, $2\)" "$list" ;;
	field)	grep -Eq "^ABI_(FIELD|FLEX)\([a-z]+, $2, $3\)" "$list" ;;
	*)	grep -Eq "^ABI_[A-Z]+\([a-z]+, .*\<$2\>" "$list" ;;
	esac && return 0
	# What the headers deliberately define differently (macros) and what
	# only the project has must at least be used by the test.
	case $1 in
	macro|const) ;;
	*) [ -n "${4:-}" ] || return 1 ;;
	esac
	name=$2
	[ "$1" = field ] && name=$3
	grep -qw "$name" "$test_c"
}

missing=0
check() {
	header=$1
	allow_test=$2
	total=0
	out=$(items "$header")
	[ -n "$out" ] || { echo "check_coverage: nothing parsed from $header" >&2; exit 1; }
	while read -r kind a b; do
		total=$((total + 1))
		if ! covered "$kind" "$a" "$b" "$allow_test"; then
			echo "check_coverage: $header: $kind $a${b:+ $b} is not covered" >&2
			missing=$((missing + 1))
		fi
	done <<EOF
$out
EOF
	echo "check_coverage: $header: $total items"
}

check "$1" ""
check "$2" yes
if [ "$missing" -ne 0 ]; then
	echo "check_coverage: $missing item(s) missing from abi_list.h" >&2
	exit 1
fi
