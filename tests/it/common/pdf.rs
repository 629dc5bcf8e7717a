//! Just enough PDF reading to check what a browser printed: the page count (`/Type /Page`
//! objects) and each page's text, read back from its content streams. Written for the
//! PDFs Chromium (Skia) writes: objects `N 0 obj … endobj`, streams with a direct
//! `/Length` and `/FlateDecode` (a small inflater here, RFC 1950/1951, after zlib's
//! `puff.c`), text shown with `Tj`/`TJ` in hex glyph strings of `Type0` fonts whose
//! `/ToUnicode` CMaps (`bfchar`, `bfrange`) give the characters, ligatures spelt out.
//! Not a general reader.

use std::collections::BTreeMap;

/// The pages of a PDF: its `/Type /Page` objects (not `/Pages`, the tree's nodes).
pub fn page_count(pdf: &[u8]) -> usize {
    let needle = b"/Type /Page";
    pdf.windows(needle.len() + 1)
        .filter(|w| w.starts_with(needle) && !w[needle.len()].is_ascii_alphabetic())
        .count()
}

// ---------------------------------------------------------------------------
// Inflate (RFC 1951), after puff.c
// ---------------------------------------------------------------------------

struct Bits<'a> {
    data: &'a [u8],
    pos: usize,
    buf: u64,
    n: u32,
}

impl Bits<'_> {
    fn bits(&mut self, need: u32) -> Option<u32> {
        while self.n < need {
            let b = *self.data.get(self.pos)?;
            self.pos += 1;
            self.buf |= u64::from(b) << self.n;
            self.n += 8;
        }
        let v = (self.buf & ((1u64 << need) - 1)) as u32;
        self.buf >>= need;
        self.n -= need;
        Some(v)
    }
}

struct Huffman {
    counts: [u16; 16],
    symbols: Vec<u16>,
}

impl Huffman {
    fn new(lengths: &[u8]) -> Huffman {
        let mut counts = [0u16; 16];
        for &l in lengths {
            counts[l as usize] += 1;
        }
        counts[0] = 0;
        let mut offs = [0u16; 16];
        for l in 1..16 {
            offs[l] = offs[l - 1] + counts[l - 1];
        }
        let mut symbols = vec![0u16; lengths.len()];
        for (s, &l) in lengths.iter().enumerate() {
            if l != 0 {
                symbols[offs[l as usize] as usize] = s as u16;
                offs[l as usize] += 1;
            }
        }
        Huffman { counts, symbols }
    }

    fn decode(&self, b: &mut Bits<'_>) -> Option<u16> {
        let (mut code, mut first, mut index) = (0i32, 0i32, 0i32);
        for len in 1..16 {
            code |= b.bits(1)? as i32;
            let count = i32::from(self.counts[len]);
            if code - count < first {
                return self.symbols.get((index + (code - first)) as usize).copied();
            }
            index += count;
            first += count;
            first <<= 1;
            code <<= 1;
        }
        None
    }
}

const LBASE: [u16; 29] = [
    3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131,
    163, 195, 227, 258,
];
const LEXT: [u8; 29] = [
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
];
const DBASE: [u16; 30] = [
    1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
    2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
];
const DEXT: [u8; 30] = [
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13,
    13,
];

fn codes(out: &mut Vec<u8>, b: &mut Bits<'_>, lit: &Huffman, dist: &Huffman) -> Option<()> {
    loop {
        let sym = lit.decode(b)?;
        match sym {
            0..=255 => out.push(sym as u8),
            256 => return Some(()),
            _ => {
                let i = usize::from(sym - 257);
                let len = usize::from(*LBASE.get(i)?) + b.bits(u32::from(LEXT[i]))? as usize;
                let d = usize::from(dist.decode(b)?);
                let back = usize::from(*DBASE.get(d)?) + b.bits(u32::from(DEXT[d]))? as usize;
                if back > out.len() {
                    return None;
                }
                for _ in 0..len {
                    out.push(out[out.len() - back]);
                }
            }
        }
    }
}

/// A zlib stream (RFC 1950) inflated; `None` when it is not one.
pub fn inflate(zlib: &[u8]) -> Option<Vec<u8>> {
    let mut b = Bits {
        data: zlib.get(2..)?,
        pos: 0,
        buf: 0,
        n: 0,
    };
    let mut out = Vec::new();
    loop {
        let last = b.bits(1)?;
        match b.bits(2)? {
            0 => {
                b.buf = 0;
                b.n = 0;
                let at = b.pos;
                let len = usize::from(*b.data.get(at)?) | usize::from(*b.data.get(at + 1)?) << 8;
                out.extend_from_slice(b.data.get(at + 4..at + 4 + len)?);
                b.pos = at + 4 + len;
            }
            1 => {
                let mut l = [0u8; 288];
                l[..144].fill(8);
                l[144..256].fill(9);
                l[256..280].fill(7);
                l[280..].fill(8);
                codes(
                    &mut out,
                    &mut b,
                    &Huffman::new(&l),
                    &Huffman::new(&[5u8; 30]),
                )?;
            }
            2 => {
                let nlen = b.bits(5)? as usize + 257;
                let ndist = b.bits(5)? as usize + 1;
                let ncode = b.bits(4)? as usize + 4;
                const ORDER: [usize; 19] = [
                    16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
                ];
                let mut cl = [0u8; 19];
                for &i in ORDER.iter().take(ncode) {
                    cl[i] = b.bits(3)? as u8;
                }
                let lencode = Huffman::new(&cl);
                let mut lengths = Vec::with_capacity(nlen + ndist);
                while lengths.len() < nlen + ndist {
                    let sym = lencode.decode(&mut b)?;
                    match sym {
                        0..=15 => lengths.push(sym as u8),
                        16 => {
                            let prev = *lengths.last()?;
                            let n = 3 + b.bits(2)?;
                            lengths.extend(std::iter::repeat_n(prev, n as usize));
                        }
                        17 => {
                            let n = 3 + b.bits(3)?;
                            lengths.extend(std::iter::repeat_n(0, n as usize));
                        }
                        _ => {
                            let n = 11 + b.bits(7)?;
                            lengths.extend(std::iter::repeat_n(0, n as usize));
                        }
                    }
                }
                let lit = Huffman::new(&lengths[..nlen]);
                let dist = Huffman::new(&lengths[nlen..nlen + ndist]);
                codes(&mut out, &mut b, &lit, &dist)?;
            }
            _ => return None,
        }
        if last == 1 {
            return Some(out);
        }
    }
}

// ---------------------------------------------------------------------------
// Objects, fonts, pages
// ---------------------------------------------------------------------------

/// One object: its dictionary text and its stream (inflated), if any.
struct Object {
    dict: String,
    stream: Option<Vec<u8>>,
}

fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    hay.get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|i| i + from)
}

/// Every `N 0 obj … endobj` of the file by number.
fn objects(pdf: &[u8]) -> BTreeMap<u32, Object> {
    let mut out = BTreeMap::new();
    let mut at = 0;
    while let Some(i) = find(pdf, b" 0 obj", at) {
        let start = pdf[..i]
            .iter()
            .rposition(|c| !c.is_ascii_digit())
            .map_or(0, |p| p + 1);
        let num: Option<u32> = std::str::from_utf8(&pdf[start..i])
            .ok()
            .and_then(|s| s.parse().ok());
        let body = i + b" 0 obj".len();
        let Some(end) = find(pdf, b"endobj", body) else {
            break;
        };
        at = end;
        let Some(num) = num else { continue };
        let raw = &pdf[body..end];
        let (dict, stream) = match find(raw, b"stream", 0) {
            Some(s) => {
                let dict = String::from_utf8_lossy(&raw[..s]).to_string();
                let mut data = s + b"stream".len();
                if raw.get(data) == Some(&b'\r') {
                    data += 1;
                }
                if raw.get(data) == Some(&b'\n') {
                    data += 1;
                }
                let len = number_after(&dict, "/Length").unwrap_or(0) as usize;
                let bytes = raw.get(data..data + len).unwrap_or_default();
                let stream = if dict.contains("/FlateDecode") {
                    inflate(bytes)
                } else {
                    Some(bytes.to_vec())
                };
                (dict, stream)
            }
            None => (String::from_utf8_lossy(raw).to_string(), None),
        };
        out.insert(num, Object { dict, stream });
    }
    out
}

/// The number right after `key` in `dict` (`/Length 123`).
fn number_after(dict: &str, key: &str) -> Option<u32> {
    let i = dict.find(key)? + key.len();
    dict[i..]
        .trim_start()
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// The `N 0 R` references in `text`, in order.
fn refs(text: &str) -> Vec<u32> {
    let words: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || "[]<>/".contains(c))
        .filter(|w| !w.is_empty())
        .collect();
    words
        .windows(3)
        .filter(|w| w[1] == "0" && w[2] == "R")
        .filter_map(|w| w[0].parse().ok())
        .collect()
}

/// The text of a `<< … >>` dictionary that follows `key` in `dict`, or the dictionary of
/// the object it references.
fn sub_dict(dict: &str, key: &str, objs: &BTreeMap<u32, Object>) -> Option<String> {
    let i = dict.find(key)? + key.len();
    let rest = dict[i..].trim_start();
    if rest.starts_with("<<") {
        let mut depth = 0;
        let b = rest.as_bytes();
        let mut j = 0;
        while j + 1 < b.len() {
            if &b[j..j + 2] == b"<<" {
                depth += 1;
                j += 2;
            } else if &b[j..j + 2] == b">>" {
                depth -= 1;
                j += 2;
                if depth == 0 {
                    return Some(rest[..j].to_string());
                }
            } else {
                j += 1;
            }
        }
        None
    } else {
        let r = refs(&rest[..rest.len().min(24)]);
        objs.get(r.first()?).map(|o| o.dict.clone())
    }
}

/// A ToUnicode CMap: glyph code to text.
fn cmap(text: &str) -> BTreeMap<u32, String> {
    fn hex(s: &str) -> Option<u32> {
        u32::from_str_radix(s.trim_matches(|c| c == '<' || c == '>'), 16).ok()
    }
    fn utf16(s: &str) -> String {
        let s = s.trim_matches(|c| c == '<' || c == '>');
        let units: Vec<u16> = (0..s.len() / 4)
            .filter_map(|i| u16::from_str_radix(&s[4 * i..4 * i + 4], 16).ok())
            .collect();
        String::from_utf16_lossy(&units)
    }
    let mut out = BTreeMap::new();
    for section in text.split("beginbfchar").skip(1) {
        let body = section.split("endbfchar").next().unwrap_or("");
        let toks: Vec<&str> = body.split_whitespace().collect();
        for pair in toks.chunks(2) {
            if let [code, dst] = pair
                && let Some(c) = hex(code)
            {
                out.insert(c, utf16(dst));
            }
        }
    }
    for section in text.split("beginbfrange").skip(1) {
        let body = section.split("endbfrange").next().unwrap_or("");
        let toks: Vec<&str> = body.split_whitespace().collect();
        for t in toks.chunks(3) {
            if let [lo, hi, dst] = t
                && let (Some(lo), Some(hi)) = (hex(lo), hex(hi))
                && dst.starts_with('<')
            {
                let base = utf16(dst);
                let mut units: Vec<u16> = base.encode_utf16().collect();
                for c in lo..=hi {
                    out.insert(c, String::from_utf16_lossy(&units));
                    if let Some(last) = units.last_mut() {
                        *last = last.wrapping_add(1);
                    }
                }
            }
        }
    }
    out
}

/// The text of each page, in page order as the file lists its pages (each text run's
/// characters through its font's ToUnicode map; runs joined with a space).
pub fn page_texts(pdf: &[u8]) -> Vec<String> {
    let objs = objects(pdf);
    let mut pages = Vec::new();
    for o in objs.values() {
        let d = &o.dict;
        let is_page = d
            .match_indices("/Type /Page")
            .any(|(i, m)| !d[i + m.len()..].starts_with('s'));
        if !is_page {
            continue;
        }
        // Font resource name -> the font's ToUnicode map.
        let mut fonts: BTreeMap<String, BTreeMap<u32, String>> = BTreeMap::new();
        if let Some(res) = sub_dict(d, "/Resources", &objs)
            && let Some(font_dict) = sub_dict(&res, "/Font", &objs)
        {
            let body = font_dict.trim_start_matches("<<");
            for part in body.split('/').skip(1) {
                let mut words = part.split_whitespace();
                let (Some(name), Some(num)) = (words.next(), words.next()) else {
                    continue;
                };
                let Some(font) = num.parse::<u32>().ok().and_then(|n| objs.get(&n)) else {
                    continue;
                };
                let map = refs(&font.dict[font.dict.find("/ToUnicode").unwrap_or(0)..])
                    .first()
                    .and_then(|n| objs.get(n))
                    .and_then(|o| o.stream.as_ref())
                    .map(|s| cmap(&String::from_utf8_lossy(s)))
                    .unwrap_or_default();
                fonts.insert(name.to_string(), map);
            }
        }
        let contents = d
            .find("/Contents")
            .map(|i| {
                let rest = &d[i + "/Contents".len()..];
                let rest = rest.trim_start();
                let end = if rest.starts_with('[') {
                    rest.find(']').unwrap_or(rest.len())
                } else {
                    rest.len().min(24)
                };
                refs(&rest[..end])
            })
            .unwrap_or_default();
        let mut text = String::new();
        for n in contents {
            if let Some(s) = objs.get(&n).and_then(|o| o.stream.as_ref()) {
                show(&String::from_utf8_lossy(s), &fonts, &mut text);
            }
        }
        pages.push(text);
    }
    pages
}

/// Appends the text a content stream shows.
fn show(content: &str, fonts: &BTreeMap<String, BTreeMap<u32, String>>, out: &mut String) {
    let empty = BTreeMap::new();
    let mut font = &empty;
    let mut last_name = String::new();
    let mut strings: Vec<String> = Vec::new();
    let b = content.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'<' if b.get(i + 1) != Some(&b'<') => {
                let end = content[i..].find('>').map_or(b.len(), |e| i + e);
                strings.push(content[i + 1..end].to_string());
                i = end + 1;
            }
            b'(' => {
                // Literal strings (not Skia's glyph runs): skipped to their end.
                let mut depth = 0;
                while i < b.len() {
                    match b[i] {
                        b'\\' => i += 1,
                        b'(' => depth += 1,
                        b')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
                i += 1;
            }
            b'/' => {
                let end = content[i + 1..]
                    .find(|c: char| c.is_whitespace() || "/[]<>()".contains(c))
                    .map_or(b.len(), |e| i + 1 + e);
                last_name = content[i + 1..end].to_string();
                i = end;
            }
            c if c.is_ascii_alphabetic() || c == b'\'' || c == b'"' => {
                let end = content[i..]
                    .find(|c: char| !(c.is_ascii_alphabetic() || c == '*' || c == '\'' || c == '"'))
                    .map_or(b.len(), |e| i + e);
                match &content[i..end] {
                    "Tf" => font = fonts.get(&last_name).unwrap_or(&empty),
                    "Tj" | "TJ" | "'" | "\"" => {
                        for s in strings.drain(..) {
                            let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
                            for k in 0..s.len() / 4 {
                                if let Ok(code) = u32::from_str_radix(&s[4 * k..4 * k + 4], 16) {
                                    let t = font.get(&code).map_or("\u{fffd}", |t| t);
                                    out.push_str(&unligature(t));
                                }
                            }
                        }
                        out.push(' ');
                    }
                    _ => strings.clear(),
                }
                i = end;
            }
            _ => i += 1,
        }
    }
}

/// A ligature's letters (Chromium shapes `fi` into one glyph, which the ToUnicode map
/// gives as U+FB01).
fn unligature(t: &str) -> String {
    t.chars()
        .map(|c| match c {
            '\u{fb00}' => "ff".to_string(),
            '\u{fb01}' => "fi".to_string(),
            '\u{fb02}' => "fl".to_string(),
            '\u{fb03}' => "ffi".to_string(),
            '\u{fb04}' => "ffl".to_string(),
            c => c.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fixed-code block (with a back reference) and a stored block: zlib streams made
    /// by Python's `zlib`; Chromium's PDFs (the browser test) bring dynamic blocks.
    #[test]
    fn inflates_zlib_streams() {
        // zlib.compress(b"hello hello hello hello")
        let fixed = [
            0x78, 0x9c, 0xcb, 0x48, 0xcd, 0xc9, 0xc9, 0x57, 0xc8, 0x40, 0x27, 0x01, 0x68, 0x03,
            0x08, 0xb1,
        ];
        assert_eq!(
            inflate(&fixed).as_deref(),
            Some(&b"hello hello hello hello"[..])
        );
        // zlib.compress(b"abc", 0): a stored block.
        let stored = [
            0x78, 0x01, 0x01, 0x03, 0x00, 0xfc, 0xff, 0x61, 0x62, 0x63, 0x02, 0x4d, 0x01, 0x27,
        ];
        assert_eq!(inflate(&stored).as_deref(), Some(&b"abc"[..]));
    }

    #[test]
    fn cmaps_read_chars_and_ranges() {
        let m = cmap(
            "2 beginbfchar\n<0003> <0020>\n<0044> <0061>\nendbfchar\n\
             1 beginbfrange\n<0010> <0012> <0041>\nendbfrange",
        );
        assert_eq!(m.get(&3).map(String::as_str), Some(" "));
        assert_eq!(m.get(&0x44).map(String::as_str), Some("a"));
        assert_eq!(m.get(&0x12).map(String::as_str), Some("C"));
    }
}
