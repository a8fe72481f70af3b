"""Host tests of the gdb helpers' pure parts: descriptor and ESR decoding
and the ptdump grouping, against the kernel's own encodings (the values
in kernel/src/arch/aarch64/desc.rs's and esr.rs's tests). Run by make
test: python3 -m unittest discover -s scripts/gdb
"""
import os
import sys
import unittest

# The modules alone: the package itself needs gdb.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "faultline"))

import desc  # noqa: E402
import esr  # noqa: E402

TABLE = 0x4123_4003
KERNEL_BLOCK = 0x0060_0000_4020_0705  # PgProt::KERNEL, 2M block
USER_RW_PAGE = 0x0068_0000_4123_4FC7  # PgProt::user(true, false): clean, DBM set
USER_RX_PAGE = 0x0020_0000_4097_1FC7  # read-only, executable, as exec maps text


class Descriptors(unittest.TestCase):
    def test_kinds(self):
        self.assertEqual(desc.kind(TABLE, 0), "table")
        self.assertEqual(desc.kind(KERNEL_BLOCK, 2), "block")
        self.assertEqual(desc.kind(USER_RW_PAGE, 3), "page")
        self.assertEqual(desc.kind(0, 3), "none")
        self.assertEqual(desc.kind(0x4000_0000, 3), "invalid")
        self.assertTrue(desc.is_table(TABLE, 2))
        self.assertFalse(desc.is_table(USER_RW_PAGE, 3), "the same bits are a page at level 3")

    def test_fields_by_arm_arm_name(self):
        fields = dict(desc.fields(USER_RW_PAGE, 3))
        self.assertEqual(fields["OA"], "0x41234000")
        self.assertEqual(fields["AP"], "11 (EL1 RO, EL0 RO)")
        self.assertEqual(fields["DBM"], 1)
        self.assertEqual(fields["SH"], "11 (Inner Shareable)")
        self.assertEqual(fields["AttrIndx"], "1 (Normal WB)")
        self.assertEqual((fields["AF"], fields["nG"], fields["PXN"], fields["UXN"]), (1, 1, 1, 1))
        self.assertEqual((fields["Contiguous"], fields["dirty(sw)"]), (0, 0))
        block = dict(desc.fields(KERNEL_BLOCK, 2))
        self.assertEqual((block["nG"], block["AP"]), (0, "00 (EL1 RW, EL0 none)"))
        self.assertEqual(dict(desc.fields(TABLE, 1))["NextLevelTableAddr"], "0x41234000")

    def test_user_permissions_as_ptdump_prints_them(self):
        self.assertEqual(desc.user_perms(USER_RW_PAGE), "rw-")
        self.assertEqual(desc.user_perms(USER_RX_PAGE), "r-x")
        self.assertEqual(desc.user_perms(KERNEL_BLOCK), "---")
        self.assertEqual(desc.user_perms(USER_RW_PAGE & ~desc.DBM), "r--", "no DBM: read-only")

    def test_dirty_in_software_or_hardware(self):
        self.assertFalse(desc.is_dirty(USER_RW_PAGE))
        self.assertTrue(desc.is_dirty(USER_RW_PAGE | desc.SW_DIRTY))
        self.assertTrue(desc.is_dirty(USER_RW_PAGE & ~desc.RDONLY), "DBM with AP[2] clear")
        self.assertFalse(desc.is_dirty(USER_RX_PAGE & ~desc.RDONLY), "no DBM: AP[2] is no dirty state")

    def test_index_per_level(self):
        va = 0x7E00_0001_2345
        self.assertEqual([desc.index(level, va) for level in range(4)], [252, 0, 0, 0x12])

    def test_ptdump_groups_runs_like_the_kernel(self):
        page = lambda va, pa, bits=USER_RW_PAGE: (va, 3, (bits & ~desc.ADDR_MASK) | pa)
        leaves = [
            page(0x400000, 0x40971000, USER_RX_PAGE),
            page(0x401000, 0x40972000, USER_RX_PAGE),  # consecutive: one run
            page(0x402000, 0x40980000, USER_RX_PAGE),  # a jump in PA: a new run
            page(0x403000, 0x40981000),                # other attributes: a new run
            page(0x405000, 0x40982000),                # a hole in VA: a new run
            (0x600000, 2, KERNEL_BLOCK | desc.NG | 0x40),  # a PMD block
            page(0x7E0000000000, 0x40B00000, USER_RW_PAGE | desc.CONT | desc.SW_DIRTY),
        ]
        self.assertEqual(desc.ptdump_lines(leaves), [
            "000000400000-000000402000 PTE pa=40971000 r-x user young",
            "000000402000-000000403000 PTE pa=40980000 r-x user young",
            "000000403000-000000404000 PTE pa=40981000 rw- user young",
            "000000405000-000000406000 PTE pa=40982000 rw- user young",
            "000000600000-000000800000 PMD pa=40200000 rw- user young",
            "7e0000000000-7e0000001000 PTE pa=40b00000 rw- user cont young dirty",
        ])

    def test_contiguous_block_rules(self):
        base = (USER_RW_PAGE & ~desc.ADDR_MASK) | desc.CONT
        good = [base | (0x40B00000 + (i << 12)) for i in range(16)]
        self.assertEqual(desc.cont_block_problems(good, 0x7E0000000000), [])
        young = list(good)
        young[3] &= ~desc.AF  # access state may differ per entry
        self.assertEqual(desc.cont_block_problems(young, 0x7E0000000000), [])
        shifted = [base | (0x40B01000 + (i << 12)) for i in range(16)]
        self.assertIn("output address 0x40b01000 not 64K-aligned",
                      desc.cont_block_problems(shifted, 0x7E0000000000))
        missing = list(good)
        missing[15] &= ~desc.CONT
        self.assertIn("entry 15 without the contiguous bit", desc.cont_block_problems(missing, 0x7E0000000000))
        dirtied = list(good)
        dirtied[7] &= ~desc.RDONLY  # the MMU made entry 7 dirty: allowed
        self.assertEqual(desc.cont_block_problems(dirtied, 0x7E0000000000), [])
        readonly = list(good)
        readonly[7] &= ~desc.DBM  # write-protected alone
        self.assertIn("entry 7 attributes differ from entry 0", desc.cont_block_problems(readonly, 0x7E0000000000))
        self.assertIn("block VA 0x7e0000001000 not 64K-aligned", desc.cont_block_problems(good, 0x7E0000001000))


class Syndromes(unittest.TestCase):
    def test_as_the_kernel_prints_them(self):
        self.assertEqual(esr.describe(0x96000004), "DataAbortSameEl, Translation(0), read")
        self.assertEqual(esr.describe(0x92000047), "DataAbortLowerEl, Translation(3), write")
        self.assertEqual(esr.describe(0x9200004F), "DataAbortLowerEl, Permission(3), write")
        self.assertEqual(esr.describe(0x82000007), "InstrAbortLowerEl, Translation(3)")
        self.assertEqual(esr.describe(0x96000149), "DataAbortSameEl, AccessFlag(1), read", "CM is not a write")
        self.assertEqual(esr.describe(0x56000000), "Svc64")
        self.assertFalse(esr.is_abort(0x56000000))


if __name__ == "__main__":
    unittest.main()
