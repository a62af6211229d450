//! The index of the listed templates that a `resources/read` consults: which templates a uri could
//! match, in the order they are tried.
//!
//! It guards against a catalog of many templates making every read slow. Without it, a uri that names
//! no listed resource is tried against every template's matcher in turn (one regex run each), so a
//! read costs time in the number of templates; with it, only the templates whose literal prefix (the
//! text before the first expression, `notes://note/` of `notes://note/{id}`) the uri starts with are
//! tried. A uri can match a template only if it starts with that prefix, so the index never drops a
//! template that would have matched: the answer is the one the plain scan gives, template for
//! template, and the host's visibility filter is asked about the same templates in the same order.
//!
//! The prefixes are held in a radix tree built once, when the server is built: a read walks it along
//! the uri (at most the length of the longest prefix) and gathers the templates whose prefix ends on
//! the way. Templates that share their whole prefix (many `app://{tenant}/…`, or `{scheme}://…` with
//! none) would all be gathered at one node; a node that holds at least [`SET_MIN_TEMPLATES`] of them
//! also holds their patterns as `regex::RegexSet`s of at most [`SET_CHUNK`] patterns each, so that one
//! pass of each set over the uri says which of them match, and only those are tried. A set is built
//! with the regex crate's default size limits; one that exceeds them is split in halves until the
//! parts fit, and a template whose pattern fits in no set is tried directly, as a short group's are:
//! the index never makes a server fail to build.
//!
//! A read then costs the walk, one pass per set on its path (one per [`SET_CHUNK`] templates of a
//! shared prefix), and one regex run (with captures, for the variables) per template that matches or
//! sits in a group too short for a set. The sets are built from the templates' own patterns (the
//! capture groups a set ignores aside), so they match exactly the uris the templates match. A uri
//! longer than [`MAX_TEMPLATE_URI_BYTES`] matches no template and is not looked up at all.
//!
//! Measured (`cargo bench -p mcp-kernel-router --features fuzzing --bench core -- catalog`): a read
//! against 10,000 templates with their own prefixes costs what one against 10 does. The tree costs
//! little to build (about 5 ms for 10,000 templates); the sets cost about 35 ms and 4 to 7 MB per
//! 1,000 templates that share a prefix, and a catalog whose templates each have their own prefix
//! builds none.
//!
//! The order is the module docs' of [`crate::catalog::template`]: fewest `{+var}`, then most literal text, then
//! bytewise by uri template (`UriTemplate::specificity`, ties kept in the catalog's sorted order).

use regex::{RegexSet, RegexSetBuilder};

use crate::catalog::template::{MAX_TEMPLATE_URI_BYTES, UriTemplate};

/// The fewest templates with one and the same prefix that are matched through sets rather than one
/// by one: measured, one pass of a set costs about as much as one template's own match.
pub(crate) const SET_MIN_TEMPLATES: usize = 16;

/// The most patterns in one set. Past a few hundred patterns a set outgrows its lazy DFA's cache on
/// varied uris: one set of 1,000 patterns was measured about 50 times slower over 1,000 different
/// uris than the same patterns in sets of 128 to 512.
pub(crate) const SET_CHUNK: usize = 256;

/// The size limit of one set's compiled program, in bytes: the regex crate's default (10 MiB), which
/// a few hundred templates' patterns fit in. A set over it is split, never refused.
pub(crate) const SET_SIZE_LIMIT: usize = 10 * (1 << 20);

/// One set over some templates of one node: pattern `k` of the set is the template of rank `ranks[k]`.
#[derive(Debug)]
struct RankSet {
    set: RegexSet,
    ranks: Box<[u32]>,
}

/// One node of the radix tree: the bytes on the edge into it, its children by first byte, and the
/// templates (by rank) whose prefix ends here.
#[derive(Debug, Default)]
struct Node {
    /// The bytes on the edge from the parent (empty for the root).
    label: Box<[u8]>,
    /// The children, sorted by the first byte of their label (labels of siblings differ there).
    children: Vec<(u8, u32)>,
    /// The ranks (positions in the match order) of the templates whose prefix ends at this node and
    /// that are tried one by one.
    ranks: Vec<u32>,
    /// The templates whose prefix ends at this node and that are matched through a set.
    sets: Vec<RankSet>,
}

/// The templates of a snapshot, in the order they are tried, with the prefix tree over them.
#[derive(Debug)]
pub(crate) struct TemplateIndex {
    /// The match order: `order[rank]` is the index of the template tried at that rank.
    order: Vec<usize>,
    /// The radix tree over the literal prefixes; `nodes[0]` is the root.
    nodes: Vec<Node>,
}

/// The length of the common prefix of two byte strings.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// A rank or a node number as stored: no catalog that fits in memory holds `u32::MAX` templates (each
/// compiles to a regex of kilobytes), so the saturation is never reached.
fn narrow(value: usize) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

impl TemplateIndex {
    /// The index over `templates`, given in the catalog's sorted order (bytewise by uri template).
    pub(crate) fn build<'a>(templates: impl IntoIterator<Item = &'a UriTemplate>) -> Self {
        let templates: Vec<&UriTemplate> = templates.into_iter().collect();
        let mut order: Vec<usize> = (0..templates.len()).collect();
        // Stable: ties keep the bytewise order of the uri templates.
        order.sort_by_key(|&i| templates[i].specificity());
        let mut index = Self { order, nodes: vec![Node::default()] };
        for rank in 0..index.order.len() {
            let prefix = templates[index.order[rank]].literal_prefix().as_bytes();
            index.insert(prefix, narrow(rank));
        }
        let pattern = |rank: u32| templates[index.order[rank as usize]].pattern();
        for node in &mut index.nodes {
            if node.ranks.len() >= SET_MIN_TEMPLATES {
                let ranks = std::mem::take(&mut node.ranks);
                (node.sets, node.ranks) = sets_over(&ranks, pattern, SET_SIZE_LIMIT);
            }
        }
        index
    }

    /// Adds the template of rank `rank`, whose literal prefix is `prefix`.
    fn insert(&mut self, prefix: &[u8], rank: u32) {
        let mut node = 0usize;
        let mut rest = prefix;
        loop {
            let Some(&first) = rest.first() else {
                self.nodes[node].ranks.push(rank);
                return;
            };
            let slot = self.nodes[node].children.binary_search_by_key(&first, |&(byte, _)| byte);
            let child = match slot {
                Ok(slot) => self.nodes[node].children[slot].1 as usize,
                Err(slot) => {
                    let leaf = narrow(self.nodes.len());
                    let leaf_node = Node { label: rest.into(), ranks: vec![rank], ..Node::default() };
                    self.nodes.push(leaf_node);
                    self.nodes[node].children.insert(slot, (first, leaf));
                    return;
                }
            };
            let shared = common_prefix(&self.nodes[child].label, rest);
            if shared < self.nodes[child].label.len() {
                // Split the edge: a new node holds the shared part, the old child the remainder.
                let label = std::mem::take(&mut self.nodes[child].label);
                let (head, tail) = label.split_at(shared);
                self.nodes[child].label = tail.into();
                let middle = narrow(self.nodes.len());
                self.nodes.push(Node {
                    label: head.into(),
                    children: vec![(tail[0], narrow(child))],
                    ..Node::default()
                });
                if let Ok(slot) = self.nodes[node].children.binary_search_by_key(&first, |&(byte, _)| byte) {
                    self.nodes[node].children[slot].1 = middle;
                }
                node = middle as usize;
            } else {
                node = child;
            }
            rest = &rest[shared..];
        }
    }

    /// Every template, by index, in the order they are tried (the plain scan).
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn all(&self) -> impl Iterator<Item = usize> + '_ {
        self.order.iter().copied()
    }

    /// The templates `uri` could match, by index, in the order they are tried: those whose literal
    /// prefix `uri` starts with. Every template that matches `uri` is among them.
    pub(crate) fn candidates(&self, uri: &str) -> impl Iterator<Item = usize> + '_ {
        let mut ranks: Vec<u32> = Vec::new();
        if uri.len() <= MAX_TEMPLATE_URI_BYTES {
            let mut node = &self.nodes[0];
            let mut rest = uri.as_bytes();
            node.gather(uri, &mut ranks);
            while let Some(&first) = rest.first() {
                let Ok(slot) = node.children.binary_search_by_key(&first, |&(byte, _)| byte) else { break };
                let child = &self.nodes[node.children[slot].1 as usize];
                let Some(after) = rest.strip_prefix(&*child.label) else { break };
                child.gather(uri, &mut ranks);
                node = child;
                rest = after;
            }
        }
        // Every template has one prefix, so no rank is gathered twice: one sort gives the match order.
        ranks.sort_unstable();
        ranks.into_iter().map(|rank| self.order[rank as usize])
    }
}

impl Node {
    /// Adds the ranks of this node's templates that `uri` could match: every one tried one by one,
    /// and those of its sets that match.
    fn gather(&self, uri: &str, ranks: &mut Vec<u32>) {
        ranks.extend_from_slice(&self.ranks);
        for set in &self.sets {
            ranks.extend(set.set.matches(uri).iter().map(|k| set.ranks[k]));
        }
    }
}

/// Sets over the templates of `ranks` (the pattern of each given by `pattern`), at most [`SET_CHUNK`]
/// a set, and the ranks of those that fit in no set (tried one by one). A set that the regex crate
/// refuses (over `size_limit`) is split in halves until the parts fit.
fn sets_over<'p>(
    ranks: &[u32],
    pattern: impl Fn(u32) -> &'p str,
    size_limit: usize,
) -> (Vec<RankSet>, Vec<u32>) {
    let mut sets = Vec::new();
    let mut loose = Vec::new();
    // Chunks still to build, last first (a stack, so the sets stay in rank order).
    let mut pending: Vec<&[u32]> = ranks.chunks(SET_CHUNK).rev().collect();
    while let Some(chunk) = pending.pop() {
        let built =
            RegexSetBuilder::new(chunk.iter().map(|&rank| pattern(rank))).size_limit(size_limit).build();
        match built {
            Ok(set) => sets.push(RankSet { set, ranks: chunk.into() }),
            Err(_) if chunk.len() > 1 => {
                let (head, tail) = chunk.split_at(chunk.len() / 2);
                pending.push(tail);
                pending.push(head);
            }
            Err(_) => loose.push(chunk[0]),
        }
    }
    (sets, loose)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(templates: &[&str]) -> Vec<UriTemplate> {
        let mut sorted = templates.to_vec();
        sorted.sort_unstable();
        sorted.iter().map(|t| UriTemplate::parse(t).unwrap()).collect()
    }

    /// The templates `uri` could match, as their literal prefixes, in match order.
    fn gathered(templates: &[UriTemplate], uri: &str) -> Vec<String> {
        let index = TemplateIndex::build(templates.iter());
        index.candidates(uri).map(|i| templates[i].literal_prefix().to_owned()).collect()
    }

    #[test]
    fn a_read_gathers_exactly_the_templates_whose_prefix_the_uri_starts_with() {
        let templates =
            parsed(&["{+any}", "a{x}", "ab{x}", "abc{x}", "abd{x}", "b{x}", "abc", "ab/{x}", "a/{x}"]);
        // `abc` and `abc{x}` share the prefix `abc`.
        assert_eq!(gathered(&templates, "abcz"), ["abc", "abc", "ab", "a", ""]);
        assert_eq!(gathered(&templates, "abd"), ["abd", "ab", "a", ""]);
        assert_eq!(gathered(&templates, "ab/1"), ["ab/", "ab", "a", ""]);
        assert_eq!(gathered(&templates, "zzz"), [""]);
        assert_eq!(gathered(&templates, ""), [""]);
    }

    #[test]
    fn prefixes_inserted_in_any_order_split_the_tree_alike() {
        let forward = ["n://note/{id}", "n://notes/{id}", "n://no{x}", "n://{x}", "n://note/x/{id}"];
        for rotation in 0..forward.len() {
            let mut order = forward.to_vec();
            order.rotate_left(rotation);
            let templates: Vec<UriTemplate> = order.iter().map(|t| UriTemplate::parse(t).unwrap()).collect();
            let mut got = gathered(&templates, "n://note/x/1");
            got.sort();
            assert_eq!(got, ["n://", "n://no", "n://note/", "n://note/x/"], "rotation {rotation}");
        }
    }

    #[test]
    fn the_match_order_is_fewest_reserved_then_most_literal_then_bytewise() {
        let templates = parsed(&["a://{+r}", "a://{x}", "a://note/{id}", "a://n{z}", "a://m{z}"]);
        let index = TemplateIndex::build(templates.iter());
        let order: Vec<String> = index.all().map(|i| templates[i].literal_prefix().to_owned()).collect();
        assert_eq!(order, ["a://note/", "a://m", "a://n", "a://", "a://"]);
        assert_eq!(
            templates[index.all().last().unwrap()].pattern(),
            UriTemplate::parse("a://{+r}").unwrap().pattern()
        );
    }

    #[test]
    fn a_large_group_sharing_a_prefix_is_narrowed_by_sets_to_the_templates_that_match() {
        let sources: Vec<String> = (0..600).map(|i| format!("app://{{tenant}}/kind{i}/{{id}}")).collect();
        let mut sources: Vec<&str> = sources.iter().map(String::as_str).collect();
        sources.push("app://{+rest}");
        let templates = parsed(&sources);
        let index = TemplateIndex::build(templates.iter());
        let root_group = &index.nodes.iter().find(|n| !n.sets.is_empty()).unwrap();
        assert_eq!(root_group.sets.len(), 601usize.div_ceil(SET_CHUNK), "chunks of at most {SET_CHUNK}");
        assert!(root_group.ranks.is_empty(), "every template of the group fits in a set");
        let found: Vec<&str> =
            index.candidates("app://acme/kind517/9").map(|i| templates[i].pattern()).collect();
        let want = [
            UriTemplate::parse("app://{tenant}/kind517/{id}").unwrap(),
            UriTemplate::parse("app://{+rest}").unwrap(),
        ];
        assert_eq!(found, [want[0].pattern(), want[1].pattern()]);
        assert_eq!(index.candidates("app://acme/kind600/9").count(), 1);
        assert_eq!(index.candidates("elsewhere://x").count(), 0);
    }

    #[test]
    fn a_group_smaller_than_the_set_threshold_is_tried_one_by_one() {
        let sources: Vec<String> = (0..SET_MIN_TEMPLATES - 1).map(|i| format!("s://{{x}}/{i}")).collect();
        let sources: Vec<&str> = sources.iter().map(String::as_str).collect();
        let templates = parsed(&sources);
        let index = TemplateIndex::build(templates.iter());
        assert!(index.nodes.iter().all(|n| n.sets.is_empty()));
        assert_eq!(index.candidates("s://a/3").count(), SET_MIN_TEMPLATES - 1);
    }

    #[test]
    fn a_set_over_the_size_limit_is_split_and_a_pattern_no_set_holds_is_tried_alone() {
        // Measured at a 64 KiB limit: 32 of `small` fit in one set, 64 do not; `large` fits in none.
        const LIMIT: usize = 64 * 1024;
        let small = r"\A[^/]+\z";
        let large = r"\A\w{2}\z";
        let fits = |patterns: &[&str]| RegexSetBuilder::new(patterns).size_limit(LIMIT).build().is_ok();
        assert!(fits(&[small; 32]) && !fits(&[small; 64]) && !fits(&[large]));
        let patterns: Vec<&str> = (0..100).map(|i| if i == 17 { large } else { small }).collect();
        let ranks: Vec<u32> = (0..100).collect();
        let (sets, loose) = sets_over(&ranks, |rank| patterns[rank as usize], LIMIT);
        assert_eq!(loose, [17]);
        assert!(sets.len() > 100 / 32, "split: {} sets", sets.len());
        let held: Vec<u32> = sets.iter().flat_map(|s| s.ranks.iter().copied()).collect();
        let want: Vec<u32> = (0..100).filter(|&r| r != 17).collect();
        assert_eq!(held, want, "every other pattern in a set, in rank order");
        assert!(sets.iter().all(|s| s.set.len() == s.ranks.len()));
    }
}
