//! Host tests of `cpio`.

use super::*;
use std::format;
use std::vec;
use std::vec::Vec;

/// Made with GNU cpio 2.13, from a tree whose every mtime is 1700000000:
/// `find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --reproducible`.
/// GNU cpio pads the archive to 512 bytes, so NULs follow the trailer.
const GNU_CPIO: &[u8] = include_bytes!("../../../pure/fixtures/initramfs-gnu-cpio.cpio");

/// Positions of the header fields the tests set.
const INO: usize = 0;
const MODE: usize = 1;
const UID: usize = 2;
const GID: usize = 3;
const NLINK: usize = 4;
const MTIME: usize = 5;
const FILESIZE: usize = 6;
const NAMESIZE: usize = 11;
const CHECK: usize = 12;

const NO_ERROR: Option<CpioError> = None;
const HEX_DIGITS: &[u8] = b"0123456789abcdefABCDEF";

/// A newc writer, independent of the parser: the fields as given, `name`
/// exactly as given (so it must carry its own NUL), and the padding.
fn push_raw(out: &mut Vec<u8>, magic: &[u8], fields: [u32; FIELD_COUNT], name: &[u8], data: &[u8]) {
    out.extend_from_slice(magic);
    for field in fields {
        out.extend_from_slice(format!("{field:08X}").as_bytes());
    }
    out.extend_from_slice(name);
    pad(out);
    out.extend_from_slice(data);
    pad(out);
}

/// Pads to the alignment; `out` starts at the start of the archive.
fn pad(out: &mut Vec<u8>) {
    while !out.len().is_multiple_of(ALIGN) {
        out.push(0);
    }
}

fn fields_for(name: &[u8], mode: u32, data: &[u8]) -> [u32; FIELD_COUNT] {
    let mut fields = [0; FIELD_COUNT];
    fields[MODE] = mode;
    fields[NLINK] = 1;
    fields[FILESIZE] = u32::try_from(data.len()).unwrap();
    fields[NAMESIZE] = u32::try_from(name.len() + 1).unwrap();
    fields
}

fn push_entry(out: &mut Vec<u8>, name: &str, mode: u32, data: &[u8]) {
    let fields = fields_for(name.as_bytes(), mode, data);
    push_raw(out, MAGIC_NEWC, fields, &nul_terminated(name), data);
}

fn push_trailer(out: &mut Vec<u8>) {
    push_entry(out, TRAILER_NAME, 0, &[]);
}

fn nul_terminated(name: &str) -> Vec<u8> {
    let mut bytes = Vec::from(name.as_bytes());
    bytes.push(0);
    bytes
}

/// The entries up to the first error, and that error.
fn read_all(archive: &[u8]) -> (Vec<Entry<'_>>, Option<CpioError>) {
    let mut iter = parse(archive);
    let mut entries = Vec::new();
    let mut error = None;
    for item in iter.by_ref() {
        match item {
            Ok(entry) => entries.push(entry),
            Err(err) => {
                error = Some(err);
                break;
            }
        }
    }
    assert_eq!(iter.next(), None, "after its end or an error, nothing more");
    (entries, error)
}

fn names<'a>(entries: &[Entry<'a>]) -> Vec<&'a str> {
    entries.iter().map(|entry| entry.name).collect()
}

/// The error reading an archive whose first entry is `entry`.
fn first_error(entry: &[u8]) -> Option<CpioError> {
    let mut archive = Vec::from(entry);
    push_trailer(&mut archive);
    read_all(&archive).1
}

/// Where digit `digit` of field `field` is in the first entry's header.
fn digit_at(field: usize, digit: usize) -> usize {
    MAGIC_LEN + field * FIELD_DIGITS + digit
}

/// Whether `inner` is a piece of `outer`, not a copy.
fn borrows_from(outer: &[u8], inner: &[u8]) -> bool {
    let outer = outer.as_ptr_range();
    let inner = inner.as_ptr_range();
    outer.start <= inner.start && inner.end <= outer.end
}

/// A small deterministic PRNG (xorshift64), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, bound: usize) -> usize {
        usize::try_from(self.next() % u64::try_from(bound).unwrap()).unwrap()
    }

    fn byte(&mut self) -> u8 {
        self.next().to_le_bytes()[0]
    }
}

/// What every input must satisfy, however malformed: no panic, an error
/// only as the last item, and names and data pointing into the input.
fn check_any_input(input: &[u8]) {
    let (entries, _) = read_all(input);
    // Each entry takes at least a header, a NUL and one byte of name.
    assert!(entries.len() <= input.len() / (HEADER_LEN + 2));
    for entry in entries {
        assert!(borrows_from(input, entry.name.as_bytes()) || entry.name.is_empty());
        assert!(borrows_from(input, entry.data));
    }
}

/// An archive with one entry of each kind, and where each entry, the
/// trailer included, starts.
fn sample_archive() -> (Vec<u8>, Vec<usize>) {
    let mut archive = Vec::new();
    let mut starts = Vec::new();
    let entries: [(&str, u32, &[u8]); 4] = [
        ("etc", S_IFDIR | 0o755, b""),
        ("etc/motd", S_IFREG | 0o644, b"hello, faultline\n"),
        ("etc/empty", S_IFREG | 0o600, b""),
        ("sh", S_IFLNK | 0o777, b"bin/busybox"),
    ];
    for (name, mode, data) in entries {
        starts.push(archive.len());
        push_entry(&mut archive, name, mode, data);
    }
    starts.push(archive.len());
    push_trailer(&mut archive);
    (archive, starts)
}

#[test]
fn reads_directories_files_and_symlinks() {
    let (archive, _) = sample_archive();
    let (entries, err) = read_all(&archive);
    assert_eq!(err, NO_ERROR);
    assert_eq!(names(&entries), ["etc", "etc/motd", "etc/empty", "sh"]);

    assert_eq!(entries[0].file_type(), FileType::Directory);
    assert_eq!(entries[0].mode, 0o040_755);
    assert_eq!(entries[0].data, b"");

    assert_eq!(entries[1].file_type(), FileType::Regular);
    assert_eq!(entries[1].mode, 0o100_644);
    assert_eq!(entries[1].data, b"hello, faultline\n");

    assert_eq!(entries[2].file_type(), FileType::Regular);
    assert_eq!(entries[2].mode, 0o100_600);
    assert_eq!(entries[2].data, b"");

    assert_eq!(entries[3].file_type(), FileType::Symlink);
    assert_eq!(entries[3].mode, 0o120_777);
    assert_eq!(entries[3].data, b"bin/busybox");

    for entry in &entries {
        assert!(borrows_from(&archive, entry.data));
        assert!(borrows_from(&archive, entry.name.as_bytes()));
    }
}

#[test]
fn reads_every_header_field_in_either_case() {
    let mut fields = fields_for(b"f", S_IFREG | 0o4751, b"abc");
    fields[INO] = 0x89AB_CDEF;
    fields[UID] = 1000;
    fields[GID] = 0xFFFF_FFFF;
    fields[NLINK] = 3;
    fields[MTIME] = 1_700_000_000;
    let mut archive = Vec::new();
    push_raw(&mut archive, MAGIC_NEWC, fields, b"f\0", b"abc");
    let upper = archive.clone();
    archive[MAGIC_LEN..HEADER_LEN].make_ascii_lowercase();
    assert_ne!(archive, upper);

    for archive in [upper, archive] {
        let (entries, err) = read_all(&archive);
        assert_eq!(err, NO_ERROR);
        let expected = Entry {
            name: "f",
            mode: 0o104_751,
            uid: 1000,
            gid: 0xFFFF_FFFF,
            mtime: 1_700_000_000,
            data: b"abc",
            nlink: 3,
            ino: 0x89AB_CDEF,
        };
        assert_eq!(entries, [expected]);
    }
}

#[test]
fn file_type_looks_only_at_the_type_bits() {
    let entry = |mode| Entry {
        name: "x",
        mode,
        uid: 0,
        gid: 0,
        mtime: 0,
        data: b"",
        nlink: 1,
        ino: 0,
    };
    assert_eq!(entry(S_IFREG | 0o7777).file_type(), FileType::Regular);
    assert_eq!(entry(S_IFDIR).file_type(), FileType::Directory);
    assert_eq!(entry(S_IFLNK | 0o777).file_type(), FileType::Symlink);
    // Character device, FIFO, socket, block device, no type at all.
    for mode in [0o020_644, 0o010_644, 0o140_755, 0o060_600, 0o644] {
        assert_eq!(entry(mode).file_type(), FileType::Other);
    }
}

#[test]
fn padding_is_right_at_every_name_and_data_length() {
    // Names of 1 to 8 bytes put the end of header + name at every offset
    // mod 4, twice; data of 0 to 8 bytes does the same for the data.
    let mut archive = Vec::new();
    let mut expected = Vec::new();
    for name_len in 1..=8 {
        for data_len in 0..=8u8 {
            let name = &"abcdefgh"[..name_len];
            // No zero bytes, so data that took in padding would show.
            let data: Vec<u8> = (1..=data_len).collect();
            push_entry(&mut archive, name, S_IFREG | 0o644, &data);
            expected.push((name, data));
        }
    }
    push_trailer(&mut archive);

    let (entries, err) = read_all(&archive);
    assert_eq!(err, NO_ERROR);
    let got: Vec<(&str, Vec<u8>)> = entries
        .iter()
        .map(|entry| (entry.name, Vec::from(entry.data)))
        .collect();
    assert_eq!(got, expected);
}

#[test]
fn stops_at_the_trailer() {
    let mut archive = Vec::new();
    push_entry(&mut archive, "before", S_IFREG | 0o644, b"1");
    push_trailer(&mut archive);
    push_entry(&mut archive, "after", S_IFREG | 0o644, b"2");
    archive.extend_from_slice(b"not an entry");
    let (entries, err) = read_all(&archive);
    assert_eq!(names(&entries), ["before"]);
    assert_eq!(err, NO_ERROR);
}

#[test]
fn a_trailer_only_archive_is_empty() {
    let mut archive = Vec::new();
    push_trailer(&mut archive);
    assert_eq!(read_all(&archive), (vec![], NO_ERROR));
    assert_eq!(read_all(b""), (vec![], NO_ERROR));
}

#[test]
fn ends_cleanly_at_the_end_of_input_without_a_trailer() {
    let mut archive = Vec::new();
    push_entry(&mut archive, "a", S_IFREG | 0o644, b"x");
    push_entry(&mut archive, "b", S_IFDIR | 0o755, b"");
    let (entries, err) = read_all(&archive);
    assert_eq!(names(&entries), ["a", "b"]);
    assert_eq!(err, NO_ERROR);
}

#[test]
fn strips_leading_slashes_and_dots() {
    let cases = [
        ("etc/init", "etc/init"),
        ("./etc/init", "etc/init"),
        ("/etc/init", "etc/init"),
        ("//etc", "etc"),
        ("././etc", "etc"),
        ("/./etc", "etc"),
        (".", ""),
        ("./", ""),
        ("/", ""),
        ("/.", ""),
        // Only whole leading `.` components go.
        (".profile", ".profile"),
        ("./.profile", ".profile"),
        ("..", ".."),
        ("../etc", "../etc"),
        ("etc/./init", "etc/./init"),
    ];
    let mut archive = Vec::new();
    for (name, _) in cases {
        push_entry(&mut archive, name, S_IFREG | 0o644, b"");
    }
    push_trailer(&mut archive);
    let (entries, err) = read_all(&archive);
    assert_eq!(err, NO_ERROR);
    let expected: Vec<&str> = cases.iter().map(|&(_, stripped)| stripped).collect();
    assert_eq!(names(&entries), expected);
}

#[test]
fn accepts_the_crc_variant_without_checking_the_sum() {
    let mut fields = fields_for(b"f", S_IFREG | 0o644, b"data");
    fields[CHECK] = 0xDEAD_BEEF;
    let mut archive = Vec::new();
    push_raw(&mut archive, MAGIC_NEWC_CRC, fields, b"f\0", b"data");
    push_trailer(&mut archive);
    let (entries, err) = read_all(&archive);
    assert_eq!(err, NO_ERROR);
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].data, b"data");
}

#[test]
fn reads_an_archive_made_by_gnu_cpio() {
    let (entries, err) = read_all(GNU_CPIO);
    assert_eq!(err, NO_ERROR);
    let expected: [(&str, u32, u32, &[u8]); 8] = [
        ("", 0o040_755, 4, b""),
        ("bin", 0o040_755, 2, b""),
        ("bin/init", 0o100_755, 1, b"hello"),
        ("etc", 0o040_755, 3, b""),
        ("etc/empty", 0o100_600, 1, b""),
        ("etc/hostname", 0o100_644, 1, b"faultline\n"),
        ("etc/init.d", 0o040_755, 2, b""),
        ("init", 0o120_777, 1, b"bin/init"),
    ];
    assert_eq!(entries.len(), expected.len());
    for ((index, entry), (name, mode, nlink, data)) in entries.iter().enumerate().zip(expected) {
        assert_eq!(entry.name, name);
        assert_eq!(entry.mode, mode, "{name}");
        assert_eq!(entry.nlink, nlink, "{name}");
        assert_eq!(entry.data, data, "{name}");
        assert_eq!((entry.uid, entry.gid), (0, 0), "{name}");
        assert_eq!(entry.mtime, 1_700_000_000, "{name}");
        // `--reproducible` numbers the inodes in archive order.
        assert_eq!(usize::try_from(entry.ino).unwrap(), index, "{name}");
    }
}

#[test]
fn rejects_a_bad_magic() {
    for magic in [
        b"070707",
        b"070700",
        b"070703",
        b"170701",
        b"\xc7\x71\0\0\0\0",
    ] {
        let mut entry = Vec::new();
        push_raw(
            &mut entry,
            magic,
            fields_for(b"f", S_IFREG, b""),
            b"f\0",
            b"",
        );
        assert_eq!(first_error(&entry), Some(CpioError::BadMagic), "{magic:?}");
    }
    // Not just in the first entry, and after good ones.
    let mut archive = Vec::new();
    push_entry(&mut archive, "good", S_IFREG | 0o644, b"1");
    let bad_start = archive.len();
    push_entry(&mut archive, "bad", S_IFREG | 0o644, b"2");
    archive[bad_start + MAGIC_LEN - 1] = b'9';
    let (entries, err) = read_all(&archive);
    assert_eq!(names(&entries), ["good"]);
    assert_eq!(err, Some(CpioError::BadMagic));
}

#[test]
fn rejects_a_non_hex_digit_in_any_field() {
    let mut good = Vec::new();
    push_entry(&mut good, "f", S_IFREG | 0o644, b"");
    assert_eq!(first_error(&good), NO_ERROR);
    for field in 0..FIELD_COUNT {
        for digit in 0..FIELD_DIGITS {
            for bad in [b'g', b'G', b' ', b'+', b'-', b'x', 0, 0xff] {
                let mut entry = good.clone();
                entry[digit_at(field, digit)] = bad;
                assert_eq!(
                    first_error(&entry),
                    Some(CpioError::BadHeader),
                    "field {field} digit {digit} byte {bad:#x}"
                );
            }
        }
    }
}

#[test]
fn rejects_bad_names() {
    let entry_with = |namesize: u32, name: &[u8]| {
        let mut fields = fields_for(b"", S_IFREG | 0o644, b"");
        fields[NAMESIZE] = namesize;
        let mut entry = Vec::new();
        push_raw(&mut entry, MAGIC_NEWC, fields, name, b"");
        entry
    };
    let cases: [(&str, u32, &[u8]); 6] = [
        ("namesize 0", 0, b""),
        ("only the NUL", 1, b"\0"),
        ("no NUL", 3, b"abc"),
        ("namesize short of the NUL", 2, b"ab\0"),
        ("NUL inside", 4, b"a\0b\0"),
        ("not UTF-8", 3, b"\xff\xfe\0"),
    ];
    for (what, namesize, name) in cases {
        assert_eq!(
            first_error(&entry_with(namesize, name)),
            Some(CpioError::BadName),
            "{what}"
        );
    }
}

#[test]
fn rejects_sizes_past_the_end_of_input() {
    for (field, size) in [
        (NAMESIZE, 200),
        (NAMESIZE, u32::MAX),
        (FILESIZE, 200),
        (FILESIZE, u32::MAX),
    ] {
        let mut fields = fields_for(b"f", S_IFREG | 0o644, b"");
        fields[field] = size;
        let mut entry = Vec::new();
        push_raw(&mut entry, MAGIC_NEWC, fields, b"f\0", b"");
        assert_eq!(
            first_error(&entry),
            Some(CpioError::Truncated),
            "field {field} = {size:#x}"
        );
    }
}

#[test]
fn truncation_at_every_length_is_an_error_or_a_clean_end() {
    let (archive, starts) = sample_archive();
    let (all, _) = read_all(&archive);
    for len in 0..archive.len() {
        let (entries, err) = read_all(&archive[..len]);
        // Entries wholly before the cut read as before. A cut inside an
        // entry is `Truncated`; a cut between entries is a clean end.
        let complete = starts.iter().filter(|&&start| start <= len).count() - 1;
        assert_eq!(entries, all[..complete], "len {len}");
        let expected_err = if starts.contains(&len) {
            None
        } else {
            Some(CpioError::Truncated)
        };
        assert_eq!(err, expected_err, "len {len}");
    }
}

#[test]
fn survives_random_corruption() {
    let (archive, _) = sample_archive();
    let mut rng = Rng(0x5eed_cafe_f00d_0001);
    for _ in 0..20_000 {
        let mut input = archive.clone();
        for _ in 0..=rng.below(4) {
            let at = rng.below(input.len());
            // Mostly hex digits, which get past the field checks and make
            // lengths wrong instead.
            input[at] = match rng.below(3) {
                0 => rng.byte(),
                _ => HEX_DIGITS[rng.below(HEX_DIGITS.len())],
            };
        }
        if rng.below(2) == 0 {
            input.truncate(rng.below(input.len() + 1));
        }
        check_any_input(&input);
    }
}

#[test]
fn survives_random_bytes() {
    let mut rng = Rng(0x0123_4567_89ab_cdef);
    for _ in 0..5_000 {
        // Half of them look like an entry for long enough to reach the
        // length checks.
        let mut input = Vec::new();
        if rng.below(2) == 0 {
            input.extend_from_slice(MAGIC_NEWC);
            input.extend((MAGIC_LEN..HEADER_LEN).map(|_| HEX_DIGITS[rng.below(HEX_DIGITS.len())]));
        }
        let len = rng.below(600);
        input.extend((0..len).map(|_| rng.byte()));
        check_any_input(&input);
    }
    check_any_input(GNU_CPIO);
}
