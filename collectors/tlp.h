/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tlp.h - pure decoding of one PCIe TLP header (layer (b) of the PTT
 * decoder; see docs/ptt.md).
 *
 * Dwords in, struct out: no I/O, no allocation, no global state. Each dword
 * is the numeric value of a header dword as the PCIe specification draws it
 * (bit 31 on the left: DW0 bits [31:29] are Fmt). PTT stores every header
 * dword as a little-endian u32 with exactly this value, so its dwords can be
 * passed in unchanged.
 *
 * Field layout (PCIe Base Specification r5.0/r6.0, section 2.2):
 *   DW0  [31:29] Fmt  [28:24] Type  23 T9  [22:20] TC  19 T8  18 Attr[2]
 *        17 LN  16 TH  15 TD  14 EP  [13:12] Attr[1:0]  [11:10] AT
 *        [9:0] Length (DW; 0 means 1024)
 *   Requests     DW1: Requester ID [31:16], Tag[7:0] [15:8],
 *                     Last DW BE [7:4], First DW BE [3:0]
 *   Memory/IO/   3DW: DW2 = Address[31:2] | PH[1:0]
 *   atomics      4DW: DW2 = Address[63:32], DW3 = Address[31:2] | PH[1:0]
 *   Config       DW2: Bus [31:24] Device [23:19] Function [18:16]
 *                     Ext Register [11:8] Register [7:2]
 *   Messages     DW1: Requester ID, Tag, Message Code [7:0]; routing r[2:0]
 *                is Type[2:0]; DW2/DW3 hold an address (routed by address),
 *                a target ID in DW2[31:16] (routed by ID), or message data
 *   Completions  DW1: Completer ID [31:16], Status [15:13], BCM 12,
 *                     Byte Count [11:0] (0 means 4096)
 *                DW2: Requester ID [31:16], Tag[7:0] [15:8], Lower Addr [6:0]
 *   Prefixes     Fmt 100: Type[4] = 1 end-end, 0 local; Type[3:0] the kind.
 *                PASID (end-end 0001): PMR 23, ER 22, PASID [19:0]
 * 10-bit tags: the full tag is T9:T8:Tag[7:0], in requests and completions.
 */
#ifndef PCIESCOPE_TLP_H
#define PCIESCOPE_TLP_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* TLP kinds with a defined Fmt/Type encoding. The order is the reporting
 * order; TLP_UNKNOWN (0) is never produced by a successful decode. */
enum tlp_kind {
        TLP_UNKNOWN = 0,
        TLP_MRD,      /* Memory Read, 3DW or 4DW */
        TLP_MRDLK,    /* Memory Read Locked */
        TLP_MWR,      /* Memory Write (posted) */
        TLP_IORD,     /* I/O Read, 3DW only */
        TLP_IOWR,     /* I/O Write (non-posted), 3DW only */
        TLP_CFGRD0,   /* Configuration Read Type 0 */
        TLP_CFGWR0,   /* Configuration Write Type 0 */
        TLP_CFGRD1,   /* Configuration Read Type 1 */
        TLP_CFGWR1,   /* Configuration Write Type 1 */
        TLP_MSG,      /* Message without data, 4DW only */
        TLP_MSGD,     /* Message with data, 4DW only */
        TLP_CPL,      /* Completion without data */
        TLP_CPLD,     /* Completion with data */
        TLP_CPLLK,    /* Completion for locked read, without data */
        TLP_CPLDLK,   /* Completion for locked read, with data */
        TLP_FETCHADD, /* AtomicOp FetchAdd */
        TLP_SWAP,     /* AtomicOp unconditional Swap */
        TLP_CAS,      /* AtomicOp Compare And Swap */
        TLP_DMWR,     /* Deferrable Memory Write (r6.0; was TCfgWr) */
        TLP_KIND_COUNT
};

/* Flow-control class: what the summariser matches on. */
enum tlp_class {
        TLP_CLASS_POSTED,
        TLP_CLASS_NON_POSTED,
        TLP_CLASS_COMPLETION,
};

/* Message routing, Type[2:0] of Msg/MsgD. */
enum tlp_msg_routing {
        TLP_ROUTE_TO_RC = 0,
        TLP_ROUTE_BY_ADDR = 1,
        TLP_ROUTE_BY_ID = 2,
        TLP_ROUTE_BROADCAST = 3, /* from the Root Complex */
        TLP_ROUTE_LOCAL = 4,     /* terminate at receiver */
        TLP_ROUTE_GATHER = 5,    /* gathered and routed to the Root Complex */
        TLP_ROUTE_RESERVED6 = 6, /* reserved: terminate at receiver */
        TLP_ROUTE_RESERVED7 = 7,
};

/* Completion status, DW1[15:13]. */
enum tlp_cpl_status {
        TLP_CPL_SC = 0,  /* Successful Completion */
        TLP_CPL_UR = 1,  /* Unsupported Request */
        TLP_CPL_CRS = 2, /* Configuration Request Retry Status (RRS in r6.0) */
        TLP_CPL_CA = 4,  /* Completer Abort */
};

#define TLP_MAX_PREFIXES 4 /* the spec allows up to 4 end-end prefixes */

#define TLP_FMT_3DW_NODATA 0
#define TLP_FMT_4DW_NODATA 1
#define TLP_FMT_3DW_DATA   2
#define TLP_FMT_4DW_DATA   3
#define TLP_FMT_PREFIX     4

/* End-end prefix Type[3:0] for PASID. */
#define TLP_PREFIX_E_PASID 0x1

struct tlp {
        enum tlp_kind kind;
        enum tlp_class cls;
        uint8_t fmt;    /* raw Fmt[2:0] of the header */
        uint8_t type;   /* raw Type[4:0] */
        uint8_t hdr_dw; /* 3 or 4 */
        bool has_data;

        /* DW0 attributes. */
        uint8_t tc;   /* traffic class */
        uint8_t attr; /* Attr[2] (IDO) << 2 | Attr[1] (RO) << 1 | Attr[0] (NS) */
        uint8_t at;   /* address type */
        bool th, td, ep, ln;
        /* Set by ptt_entry_tlp() for a PTT 4DW entry: the hardware did not
         * record TC, Attr, LN, TD, EP and AT, so they read as 0 here. */
        bool dw0_partial;
        uint16_t length_dw;  /* 1..1024 (the encoded 0 is 1024) */
        uint16_t length_raw; /* the 10-bit field as encoded */

        /* Requests; for completions the requester/tag from DW2. */
        uint16_t requester_id;
        uint16_t tag; /* 10 bits: T9 << 9 | T8 << 8 | Tag[7:0] */
        uint8_t first_be, last_be;

        /* Memory, I/O, atomics, DMWr, messages routed by address. */
        bool has_addr;
        uint64_t addr; /* byte address, low two bits 0 */
        uint8_t ph;    /* processing hint when th (memory requests) */

        /* Configuration requests: the target function and byte offset;
         * messages routed by ID: the target ID. */
        uint16_t target_id;
        uint16_t cfg_reg; /* byte offset (Ext Register:Register << 2) */

        /* Messages. */
        uint8_t msg_code;
        uint8_t msg_routing; /* enum tlp_msg_routing */

        /* Completions. */
        uint16_t completer_id;
        uint8_t cpl_status; /* enum tlp_cpl_status (raw 3 bits) */
        bool bcm;
        uint16_t byte_count; /* 1..4096 (the encoded 0 is 4096) */
        uint8_t lower_addr;  /* 7 bits */

        /* Prefixes in front of the header, in order. */
        uint8_t nprefix;
        uint32_t prefix[TLP_MAX_PREFIXES];
        bool has_pasid;
        uint32_t pasid; /* 20 bits */
        bool pasid_exec, pasid_priv;

        uint32_t dw[4]; /* the header dwords as given (dw[3] 0 for 3DW) */
};

/*
 * tlp_decode - decode the TLP at @dw: zero or more prefixes (Fmt 100), then
 * one 3DW or 4DW header. @ndw: how many dwords are valid.
 *
 * Returns the number of dwords used (prefixes + header) on success;
 * -ENODATA when @ndw ends before the header does; -EBADMSG for a reserved
 * Fmt, a Fmt/Type pair the spec does not define (e.g. a 4DW I/O or config
 * request, a 3DW message), or more than TLP_MAX_PREFIXES prefixes. On error
 * @out holds the raw fmt/type/dw so tlp_desc() can still show them, with
 * kind TLP_UNKNOWN. Length, byte enables etc. are reported as encoded, not
 * checked (a trace must show a malformed TLP as it was).
 */
int tlp_decode(const uint32_t *dw, size_t ndw, struct tlp *out);

/* What the summariser needs of a header, without the rest. */
struct tlp_brief {
        uint8_t kind; /* enum tlp_kind */
        uint8_t cls;  /* enum tlp_class */
        bool last;    /* completions: tlp_cpl_is_last() */
        uint16_t requester_id;
        uint16_t tag; /* 10 bits */
        uint32_t payload_bytes;
};

/* The Fmt/Type table (index Fmt << 5 | Type; TLP_UNKNOWN where reserved)
 * and the class of each kind: shared by tlp_decode() and the inline fast
 * path below, so the two cannot disagree on what a header is. */
extern const uint8_t tlp_kind_table[256];
extern const uint8_t tlp_class_table[TLP_KIND_COUNT];

/*
 * tlp_decode_brief_fields - the core of tlp_decode_brief() on the DW0 fields
 * it uses, already extracted: @fmt_type = Fmt << 5 | Type, @length the
 * 10-bit Length field, @tag_hi = T9 << 1 | T8. A PTT 4DW entry stores these
 * fields at other bit positions than PCIe DW0; taking them separately lets
 * the summariser decode such an entry without rebuilding DW0 first.
 */
static inline int tlp_decode_brief_fields(unsigned int fmt_type, unsigned int length,
                                          unsigned int tag_hi, uint32_t dw1, uint32_t dw2,
                                          struct tlp_brief *out)
{
        unsigned int kind = tlp_kind_table[fmt_type & 0xff], has_data = (fmt_type >> 6) & 1;
        uint32_t ids = dw1;

        if (kind == TLP_UNKNOWN) {
                *out = (struct tlp_brief){.kind = TLP_UNKNOWN};
                return -EBADMSG;
        }
        out->kind = (uint8_t)kind;
        out->cls = tlp_class_table[kind];
        /* Length 0 encodes 1024 DW: ((length - 1) & 0x3ff) + 1 without a branch. */
        out->payload_bytes = has_data ? ((((length & 0x3ffu) - 1) & 0x3ffu) + 1) * 4u : 0;
        out->last = false;
        if (out->cls == TLP_CLASS_COMPLETION) {
                unsigned int bc = dw1 & 0xfff;

                ids = dw2;
                out->last = !has_data || ((dw1 >> 13) & 7) != TLP_CPL_SC ||
                            (bc ? bc : 4096u) <= out->payload_bytes - (dw2 & 3u);
        }
        out->requester_id = (uint16_t)(ids >> 16);
        out->tag = (uint16_t)((tag_hi & 3u) << 8 | ((ids >> 8) & 0xff));
        return 0;
}

/*
 * tlp_decode_brief - the fast path of tlp_decode() for one header without
 * prefixes: kind, class, requester ID and 10-bit tag (from DW2 for
 * completions), payload bytes and whether a completion is the last one (the
 * rule of tlp_cpl_is_last() on the raw fields). Inline because the
 * summariser runs it on every entry; the unit tests and the fuzz targets
 * check it against tlp_decode(). Returns 0, or -EBADMSG for a reserved
 * Fmt/Type.
 */
static inline int tlp_decode_brief(uint32_t dw0, uint32_t dw1, uint32_t dw2, struct tlp_brief *out)
{
        return tlp_decode_brief_fields(dw0 >> 24, dw0 & 0x3ff,
                                       ((dw0 >> 23) & 1) << 1 | ((dw0 >> 19) & 1), dw1, dw2, out);
}

/* "MRd", "CplD", ...; "unknown" for TLP_UNKNOWN or out of range. */
const char *tlp_kind_name(enum tlp_kind kind);

/* Inverse of tlp_kind_name (exact match); TLP_UNKNOWN if none. */
enum tlp_kind tlp_kind_from_name(const char *name);

/* Class of a kind; TLP_UNKNOWN reads as posted. */
enum tlp_class tlp_kind_class(enum tlp_kind kind);

/* "posted", "non_posted", "completion". */
const char *tlp_class_name(enum tlp_class cls);

/* "SC", "UR", "CRS", "CA", or "reserved". */
const char *tlp_cpl_status_name(unsigned int status);

/* "to_rc", "by_addr", "by_id", "broadcast", "local", "gather", "reserved". */
const char *tlp_msg_routing_name(unsigned int routing);

/* Payload bytes on the wire: length_dw * 4 for kinds with data, else 0. */
uint32_t tlp_payload_bytes(const struct tlp *t);

/*
 * tlp_cpl_is_last - whether a completion ends its request: a completion
 * without data, an unsuccessful status, or a Byte Count no larger than the
 * bytes this completion carries after its Lower Address offset (split
 * completions count down; the last one carries all that remains).
 */
bool tlp_cpl_is_last(const struct tlp *t);

/*
 * tlp_desc - one line describing @t into @buf (always NUL-terminated when
 * @len > 0). Returns what snprintf would: the full length, so a result >=
 * @len means the text was cut. An unknown kind prints its raw dwords.
 */
int tlp_desc(const struct tlp *t, char *buf, size_t len);

#endif /* PCIESCOPE_TLP_H */
