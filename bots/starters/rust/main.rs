// A Grass bot in Rust: a random legal action at every decision (bots/PROTOCOL.md).
// Messages are one JSON object a line. The runner writes them compactly, "type" and "id"
// first, and action texts hold no quotes, so a little string searching reads what we need
// (no crates: the ladder builds offline).
use std::io::{self, BufRead, Write};

fn number_after(line: &str, key: &str) -> u64 {
    let tag = format!("\"{}\":", key);
    line.find(&tag).map_or(0, |at| {
        let rest = &line[at + tag.len()..];
        let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
        digits.parse().unwrap_or(0)
    })
}

fn legal_actions(line: &str) -> Vec<String> {
    let start = line.find("\"legal\":[").expect("an act has legal actions") + 9;
    let end = start + line[start..].find(']').unwrap();
    line[start..end].split(',').map(|a| a.trim_matches('"').to_string()).collect()
}

fn main() {
    let mut seed: u64 = 1;
    let mut out = io::stdout();
    for line in io::stdin().lock().lines() {
        let line = line.unwrap();
        if line.contains("\"type\":\"hello\"") {
            seed = number_after(&line, "rng_seed") | 1;
            writeln!(out, "{{\"type\":\"ready\",\"protocol\":1}}").unwrap();
        } else if line.contains("\"type\":\"act\"") {
            seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17; // xorshift
            let legal = legal_actions(&line);
            let action = &legal[(seed % legal.len() as u64) as usize];
            let id = number_after(&line, "id");
            writeln!(out, "{{\"type\":\"action\",\"id\":{},\"action\":\"{}\"}}", id, action).unwrap();
        } else if line.contains("\"type\":\"game_end\"") {
            return;
        }
        out.flush().unwrap();
    }
}
