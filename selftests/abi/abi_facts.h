/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A "fact" is one number about the ABI (a size, an offset, a constant) as one
 * kfd_ioctl.h sees it. abi_upstream.c and abi_project.c each build a table
 * of facts from abi_list.h against their own header; the two headers share
 * an include guard, hence two translation units. abi_test.c compares them.
 */
#ifndef ABI_FACTS_H
#define ABI_FACTS_H

enum abi_kind {
	ABI_K_SIZEOF,		/* sizeof a struct or enum */
	ABI_K_ALIGNOF,		/* alignment of a struct */
	ABI_K_OFFSETOF,		/* offset of a member */
	ABI_K_MEMBER_SIZE,	/* size of a member (element size if flexible) */
	ABI_K_VALUE,		/* value of a constant or expression */
	ABI_K_IOCTL,		/* value of an ioctl request code */
};

/* Arithmetic types a member or constant can have; ABI_T_OTHER for the rest. */
enum abi_type {
	ABI_T_OTHER,
	ABI_T_CHAR,
	ABI_T_SCHAR,
	ABI_T_UCHAR,
	ABI_T_SHORT,
	ABI_T_USHORT,
	ABI_T_INT,
	ABI_T_UINT,
	ABI_T_LONG,
	ABI_T_ULONG,
	ABI_T_LLONG,
	ABI_T_ULLONG,
};

#define ABI_TYPE_OF(x) _Generic((x),				\
	char: ABI_T_CHAR,					\
	signed char: ABI_T_SCHAR,				\
	unsigned char: ABI_T_UCHAR,				\
	short: ABI_T_SHORT,					\
	unsigned short: ABI_T_USHORT,				\
	int: ABI_T_INT,						\
	unsigned int: ABI_T_UINT,				\
	long: ABI_T_LONG,					\
	unsigned long: ABI_T_ULONG,				\
	long long: ABI_T_LLONG,					\
	unsigned long long: ABI_T_ULLONG,			\
	default: ABI_T_OTHER)

struct abi_fact {
	const char *group;	/* abi_list.h section, one TEST() each */
	const char *what;	/* e.g. "offsetof(struct x, y)" */
	enum abi_kind kind;
	unsigned long long value;	/* signed values are sign-extended */
	enum abi_type type;
};

extern const struct abi_fact abi_upstream_facts[];
extern const unsigned int abi_upstream_count;
extern const struct abi_fact abi_project_facts[];
extern const unsigned int abi_project_count;

#endif /* ABI_FACTS_H */
