// SPDX-License-Identifier: GPL-2.0
/*
 * Replays inputs of the image fuzzer (fuzz/image_fuzz.c) without libFuzzer,
 * built with ASan and UBSan: every file named on the command line (or in a
 * directory named there) goes through the same restore and inspect paths.
 * `make -C userspace-plugin check` runs it over tests/fuzz-regressions/,
 * the inputs that once found a bug, and over fresh seeds.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static int replay_file(const char *path)
{
	unsigned char *buf;
	struct stat st;
	FILE *f;

	f = fopen(path, "rb");
	if (!f || fstat(fileno(f), &st)) {
		perror(path);
		return 1;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf || fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
		perror(path);
		return 1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)st.st_size);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	char path[4096];
	struct dirent *de;
	struct stat st;
	int i, n = 0, bad = 0;
	DIR *d;

	for (i = 1; i < argc; i++) {
		if (stat(argv[i], &st) || !S_ISDIR(st.st_mode)) {
			bad |= replay_file(argv[i]);
			n++;
			continue;
		}
		d = opendir(argv[i]);
		while (d && (de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i],
				 de->d_name);
			bad |= replay_file(path);
			n++;
		}
		if (d)
			closedir(d);
	}
	fprintf(stderr, "fuzz replay: %d inputs%s\n", n, bad ? ", errors" : "");
	return bad;
}
