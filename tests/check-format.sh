#!/bin/bash
# The C sources follow .clang-format (run `clang-format -i` on a file to fix it).
set -u
cd "$(dirname "$0")/.."
files=$(git ls-files 'lib/*.[ch]' 'cmd/*.[ch]' 'tests/*.[ch]' 2>/dev/null || ls lib/*/*.[ch] cmd/*.[ch])
if clang-format --dry-run --Werror $files; then
	echo "format: clean"
else
	echo "format: run clang-format -i on the files above"
	exit 1
fi
