/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Expands abi_list.h into a table of facts about whichever kfd_ioctl.h the
 * including file pulled in. The includer defines ABI_TABLE and
 * ABI_TABLE_COUNT to the names the table and its length get.
 */
#include <stddef.h>
#include "abi_facts.h"

#define ABI_MEMBER(tag, member)	(((struct tag *)0)->member)

#define ABI_STRUCT(group, tag)						\
	{ #group, "sizeof(struct " #tag ")", ABI_K_SIZEOF,		\
	  sizeof(struct tag), ABI_T_OTHER },				\
	{ #group, "_Alignof(struct " #tag ")", ABI_K_ALIGNOF,		\
	  _Alignof(struct tag), ABI_T_OTHER },

#define ABI_FIELD(group, tag, member)					\
	{ #group, "offsetof(struct " #tag ", " #member ")",		\
	  ABI_K_OFFSETOF, offsetof(struct tag, member), ABI_T_OTHER },	\
	{ #group, "sizeof(struct " #tag "." #member ")",		\
	  ABI_K_MEMBER_SIZE, sizeof(ABI_MEMBER(tag, member)),		\
	  ABI_TYPE_OF(ABI_MEMBER(tag, member)) },

/* A flexible array has no size; compare its element instead. */
#define ABI_FLEX(group, tag, member)					\
	{ #group, "offsetof(struct " #tag ", " #member ")",		\
	  ABI_K_OFFSETOF, offsetof(struct tag, member), ABI_T_OTHER },	\
	{ #group, "sizeof(struct " #tag "." #member "[0])",		\
	  ABI_K_MEMBER_SIZE, sizeof(ABI_MEMBER(tag, member)[0]),	\
	  ABI_T_OTHER },

#define ABI_ENUM(group, tag)						\
	{ #group, "sizeof(enum " #tag ")", ABI_K_SIZEOF,		\
	  sizeof(enum tag), ABI_T_OTHER },

#define ABI_CONST(group, name)						\
	{ #group, #name, ABI_K_VALUE, (unsigned long long)(name),	\
	  ABI_TYPE_OF(name) },

#define ABI_IOCTL(group, name)						\
	{ #group, #name, ABI_K_IOCTL, (unsigned long long)(name),	\
	  ABI_TYPE_OF(name) },

#define ABI_EXPR(group, ...)						\
	{ #group, #__VA_ARGS__, ABI_K_VALUE,				\
	  (unsigned long long)(__VA_ARGS__), ABI_TYPE_OF(__VA_ARGS__) },

const struct abi_fact ABI_TABLE[] = {
#include "abi_list.h"
};

const unsigned int ABI_TABLE_COUNT = sizeof(ABI_TABLE) / sizeof(ABI_TABLE[0]);
