//! Reading a `valgrind --tool=callgrind --dump-instr=yes` profile: the instructions each code address
//! ran, by object.
//!
//! The format (callgrind's `callgrind-format` manual) is a header (`positions:`, `events:`, …), then
//! specification lines (`ob=`, `fn=`, `cfn=`, `calls=`, …) and cost lines: one subposition per
//! position (an absolute number, `+N`/`-N` relative to the same position on the line before, or `*`
//! for the same), then the events, trailing zeros left out. Names may be compressed: `(id) name` the
//! first time, `(id)` after. The cost line after `calls=` is the call's inclusive cost, charged to
//! the calling instruction; it is skipped, so that every address carries only what it ran itself.
//!
//! With `--cache-sim=yes` the events include the simulated cache misses; only their totals are
//! read (the `totals:` line, else `summary:`), with the caches simulated (`desc: I1 cache: …`).

use std::collections::HashMap;

/// Instructions run per code address, with the object each address belongs to.
#[derive(Debug, Default)]
pub(crate) struct Profile {
    /// Object names, indexed by [`Cost::object`].
    pub(crate) objects: Vec<String>,
    /// (object index, address) → instructions executed there (self cost, `Ir`).
    pub(crate) costs: HashMap<(usize, u64), u64>,
    /// Each event's total over the profile (`Ir`, and with a cache simulation `I1mr`, `D1mr`, …).
    pub(crate) totals: HashMap<String, u64>,
    /// The caches simulated, as callgrind describes them (`I1 cache: 32768 B, 64 B, 8-way
    /// associative`); empty without a cache simulation.
    pub(crate) caches: Vec<String>,
}

impl Profile {
    /// The index of the object whose name ends with `/file_name` (or is `file_name`).
    pub(crate) fn object_named(&self, file_name: &str) -> Option<usize> {
        self.objects.iter().position(|o| o == file_name || o.ends_with(&format!("/{file_name}")))
    }
}

/// Parses a callgrind profile written with `--dump-instr=yes` (its first position is `instr`).
pub(crate) fn parse(text: &str) -> Result<Profile, String> {
    let mut profile = Profile::default();
    let mut object_ids: HashMap<String, usize> = HashMap::new();
    let mut positions = 0usize;
    let mut ir_column: Option<usize> = None;
    let mut events: Vec<String> = Vec::new();
    let mut totals_seen = false;
    let mut current_object: Option<usize> = None;
    let mut last = Vec::<u64>::new();
    let mut skip_next_cost = false;
    for (n, line) in text.lines().enumerate() {
        let line = line.trim_end();
        let Some(first) = line.chars().next() else { continue };
        if first.is_ascii_digit() || matches!(first, '+' | '-' | '*') {
            if positions == 0 {
                return Err(format!("line {}: a cost line before `positions:`", n + 1));
            }
            let mut fields = line.split_ascii_whitespace();
            for slot in last.iter_mut().take(positions) {
                let field = fields.next().ok_or_else(|| format!("line {}: too few positions", n + 1))?;
                *slot = subposition(field, *slot).ok_or_else(|| format!("line {}: bad position", n + 1))?;
            }
            if skip_next_cost {
                skip_next_cost = false;
                continue;
            }
            let column = ir_column.ok_or_else(|| format!("line {}: no `events:` with Ir", n + 1))?;
            let ir = match fields.nth(column) {
                Some(v) => v.parse::<u64>().map_err(|_| format!("line {}: bad cost", n + 1))?,
                None => 0,
            };
            let object = current_object.ok_or_else(|| format!("line {}: a cost outside any `ob=`", n + 1))?;
            if ir > 0 {
                let cost = profile.costs.entry((object, last[0])).or_default();
                *cost = cost.saturating_add(ir);
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("positions:") {
            let names: Vec<&str> = rest.split_ascii_whitespace().collect();
            if names.first() != Some(&"instr") {
                return Err(
                    "the profile has no instruction addresses (run callgrind with --dump-instr=yes)".into()
                );
            }
            positions = names.len();
            last = vec![0; positions];
        } else if let Some(rest) = line.strip_prefix("events:") {
            events = rest.split_ascii_whitespace().map(str::to_owned).collect();
            ir_column = events.iter().position(|e| e == "Ir");
        } else if let Some((totals, rest)) = line
            .strip_prefix("totals:")
            .map(|r| (true, r))
            .or_else(|| line.strip_prefix("summary:").map(|r| (false, r)))
        {
            // `totals:` (at the end) wins over `summary:` (in the header); trailing zeros left out.
            if totals || !totals_seen {
                totals_seen |= totals;
                profile.totals.clear();
                for (event, value) in events.iter().zip(rest.split_ascii_whitespace()) {
                    let value = value.parse::<u64>().map_err(|_| format!("line {}: bad total", n + 1))?;
                    profile.totals.insert(event.clone(), value);
                }
            }
        } else if let Some(rest) = line.strip_prefix("desc: ")
            && let Some((cache, described)) = rest.split_once(" cache:")
            && !described.trim().is_empty()
        {
            profile.caches.push(format!("{cache} cache: {}", described.trim()));
        } else if let Some(rest) = line.strip_prefix("ob=") {
            let index = name_index(rest, &mut object_ids, &mut profile.objects);
            current_object = Some(index.ok_or_else(|| format!("line {}: an object never named", n + 1))?);
        } else if let Some(rest) = line.strip_prefix("cob=") {
            // Defines a compressed name that a later `ob=` may use; the calls' object is not needed.
            name_index(rest, &mut object_ids, &mut profile.objects)
                .ok_or_else(|| format!("line {}: an object never named", n + 1))?;
        } else if line.starts_with("calls=") {
            // The position line after it is parsed (it moves the relative positions, as in callgrind's
            // own readers) but its cost is the callee's.
            skip_next_cost = true;
        }
    }
    Ok(profile)
}

/// One subposition: absolute (decimal or `0x` hex), relative to `previous` (`+N`, `-N`), or `*`.
fn subposition(field: &str, previous: u64) -> Option<u64> {
    let number = |s: &str| match s.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => s.parse::<u64>().ok(),
    };
    match field.as_bytes().first()? {
        b'*' => Some(previous),
        b'+' => previous.checked_add(number(&field[1..])?),
        b'-' => previous.checked_sub(number(&field[1..])?),
        _ => number(field),
    }
}

/// The index of a possibly compressed name (`(id) name` defines, `(id)` refers, `name` is plain);
/// `None` for a reference to an id never defined.
fn name_index(spec: &str, ids: &mut HashMap<String, usize>, names: &mut Vec<String>) -> Option<usize> {
    let spec = spec.trim();
    let (id, name) = match spec.strip_prefix('(').and_then(|s| s.split_once(')')) {
        Some((id, rest)) => (Some(id.to_owned()), rest.trim()),
        None => (None, spec),
    };
    if let Some(id) = &id
        && name.is_empty()
    {
        return ids.get(id).copied();
    }
    let index = match names.iter().position(|n| n == name) {
        Some(index) => index,
        None => {
            names.push(name.to_owned());
            names.len() - 1
        }
    };
    if let Some(id) = id {
        ids.insert(id, index);
    }
    Some(index)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROFILE: &str = "\
# callgrind format
version: 1
positions: instr line
events: Ir Dr
summary: 0

ob=(1) /bin/server
fl=(1) main.rs
fn=(1) main
0x1000 3 5 2
+4 * 7
calls=1 0x2000 9
+4 * 1000
+8 * 2
ob=(2) /lib/libc.so.6
fn=(2) malloc
0x50 0 11
cob=(1)
cfn=(1)
calls=2 0x1000 3
* * 9999
ob=(1)
fn=(3) helper
0x2000 9 4
-0x1000 9 1
";

    #[test]
    fn charges_each_address_only_its_own_instructions() {
        let p = parse(PROFILE).unwrap();
        let server = p.object_named("server").unwrap();
        let libc = p.object_named("libc.so.6").unwrap();
        assert_eq!(p.objects.len(), 2);
        assert_eq!(p.costs[&(server, 0x1000)], 5 + 1);
        assert_eq!(p.costs[&(server, 0x1004)], 7);
        // The cost after `calls=` (1000, at 0x1008) is the callee's, not the caller's.
        assert!(!p.costs.contains_key(&(server, 0x1008)));
        assert_eq!(p.costs[&(server, 0x1010)], 2);
        assert_eq!(p.costs[&(libc, 0x50)], 11);
        assert_eq!(p.costs[&(server, 0x2000)], 4);
        assert_eq!(p.costs.values().sum::<u64>(), 5 + 7 + 2 + 11 + 4 + 1);
    }

    #[test]
    fn a_name_defined_by_cob_serves_a_later_ob_and_ir_is_found_by_its_column() {
        let p = parse(
            "positions: instr\nevents: Dr Ir\nob=(1) /bin/a\nfn=(1) f\n\
             cob=(2) /lib/b.so\ncfn=(2) g\ncalls=1 0x10\n0x4 3 999\n\
             ob=(2)\nfn=(2)\n0x10 7 5\n0x14\n",
        )
        .unwrap();
        let b = p.object_named("b.so").unwrap();
        // Ir is the second event; a position-only line costs nothing.
        assert_eq!(p.costs.get(&(b, 0x10)), Some(&5));
        assert_eq!(p.costs.len(), 1);
    }

    #[test]
    fn reads_the_event_totals_from_totals_over_summary_and_the_caches_simulated() {
        let p = parse(
            "desc: I1 cache: 32768 B, 64 B, 8-way associative\ndesc: LL cache: \n\
             positions: instr\nevents: Ir I1mr D1mr\nsummary: 1 2 3\nob=a\n0x10 5 1\ntotals: 5 1\n",
        )
        .unwrap();
        assert_eq!(p.caches, ["I1 cache: 32768 B, 64 B, 8-way associative"]);
        // `totals:` replaces `summary:`, and an event it leaves out is not counted.
        assert_eq!((p.totals["Ir"], p.totals["I1mr"], p.totals.get("D1mr")), (5, 1, None));
        let p = parse("positions: instr\nevents: Ir\nsummary: 9\nob=a\n0x10 9\n").unwrap();
        assert_eq!((p.totals["Ir"], p.caches.len()), (9, 0));
        assert!(parse("positions: instr\nevents: Ir\ntotals: x\n").is_err());
    }

    #[test]
    fn refuses_an_object_id_never_defined() {
        let err = parse("positions: instr\nevents: Ir\nob=(7)\n0x10 1\n").unwrap_err();
        assert!(err.contains("never named"), "{err}");
    }

    #[test]
    fn refuses_a_profile_without_instruction_addresses() {
        let err = parse("positions: line\nevents: Ir\nob=a\n1 2\n").unwrap_err();
        assert!(err.contains("--dump-instr=yes"), "{err}");
        assert!(parse("events: Ir\n0x10 1\n").is_err());
    }

    #[test]
    fn reads_every_form_of_subposition() {
        assert_eq!(subposition("0x10", 0), Some(16));
        assert_eq!(subposition("16", 0), Some(16));
        assert_eq!(subposition("+0x2", 16), Some(18));
        assert_eq!(subposition("-3", 16), Some(13));
        assert_eq!(subposition("*", 16), Some(16));
        assert_eq!(subposition("-20", 16), None);
        assert_eq!(subposition("x", 16), None);
    }
}
