//! Reading back the recording a page holds: raw deflate in base64, its
//! agents' values apart.

#![allow(dead_code)]

/// The start tag and the text of the script element `id` in `page`, if
/// it has one.
pub fn element<'a>(page: &'a str, id: &str) -> Option<(&'a str, &'a str)> {
    let open = format!(r#"<script id="{id}" "#);
    let tag = page.find(&open)?;
    let start = tag + page[tag..].find('>').unwrap() + 1;
    let len = page[start..].find("</script>").expect("its end");
    Some((&page[tag..start], &page[start..start + len]))
}

/// `data-name="…"` of a start tag.
pub fn attr<'a>(tag: &'a str, name: &str) -> &'a str {
    let key = format!(r#"{name}=""#);
    let at = tag.find(&key).expect("the attribute") + key.len();
    &tag[at..at + tag[at..].find('"').unwrap()]
}

/// Raw deflate in base64, unpacked.
pub fn unpack(b64: &str) -> String {
    let digit = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let mut bytes = Vec::new();
    for q in b64.as_bytes().chunks(4) {
        let n = q
            .iter()
            .filter(|&&c| c != b'=')
            .fold(0u32, |n, &c| n << 6 | u32::from(digit(c)));
        let k = q.iter().filter(|&&c| c != b'=').count();
        let n = n << (6 * (4 - k));
        bytes.extend_from_slice(&n.to_be_bytes()[1..k]);
    }
    String::from_utf8(miniz_oxide::inflate::decompress_to_vec(&bytes).unwrap()).unwrap()
}

/// The text of the recording the page holds under `id`: its text without
/// the values, and each agent's values put back where they were.
pub fn embedded_recording(page: &str, id: &str) -> String {
    let rest = unpack(element(page, id).expect("the recording").1);
    // Without values, nothing was cut out.
    let Some((tag, values)) = element(page, &format!("{id}-values")) else {
        return rest;
    };
    let at: usize = attr(tag, "data-at").parse().unwrap();
    let lens: Vec<usize> = attr(tag, "data-agents")
        .split(',')
        .skip(1)
        .step_by(2)
        .map(|n| n.parse().unwrap())
        .collect();
    let (mut off, mut mid) = (0, String::new());
    for len in lens {
        mid.push_str(&unpack(&values[off..off + len]));
        off += len;
    }
    assert!(rest.is_ascii(), "data-at counts UTF-16 units");
    format!(r#"{},"values":[{mid}{}"#, &rest[..at], &rest[at..])
}
