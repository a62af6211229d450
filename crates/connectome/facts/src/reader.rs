//! From the functions of the scope's `.ll` files to edges, dynamic dispatch sites and external callees.
//!
//! A function is *in scope* when the item it folds into belongs to a scope crate. Only in-scope
//! functions are callers. An out-of-scope function *defined* in the same `.ll` is glue the scope crate
//! instantiated (`Option::map`, iterator adapters, `<Box<dyn Fn> as Fn>::call`, drop glue): a call to it
//! is an external callee, and the calls it makes on the caller's behalf are followed through further
//! glue, so an in-scope item it calls is an edge of the caller and each indirect call it makes is a
//! dynamic dispatch site of the caller.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::rc::Rc;

use connectome_graph::{CallEdge, DynamicSite};

use crate::ir::{self, Call, Function};
use crate::names;

/// Accumulates facts over the `.ll` files of the scope, read in crate-name order.
pub(crate) struct Reader {
    scope: BTreeSet<String>,
    /// Demangled names (generic arguments included) whose body was read: a body emitted in two crates'
    /// IR is counted once.
    seen: HashSet<String>,
    /// Indirect calls numbered so far per caller item.
    ordinals: BTreeMap<String, u64>,
    /// Direct calls with both ends in scope.
    pub edges: Vec<CallEdge>,
    /// Indirect calls of in-scope items.
    pub sites: Vec<DynamicSite>,
    /// Calls from in-scope items to items outside the scope.
    pub external: Vec<CallEdge>,
}

/// What a call into glue reaches: in-scope symbols (in first-reached order) and indirect calls
/// (function index, call index), in walk order.
#[derive(Default)]
struct Reach {
    symbols: Vec<String>,
    indirect: Vec<(usize, usize)>,
}

/// One `.ll` file: its functions, which of them are glue, and what each glue function reaches.
struct File {
    functions: Vec<Function>,
    /// Symbol → index of its (first) definition.
    defined: HashMap<String, usize>,
    /// Per function: its demangled name, its item and whether that is in scope (`None`: not Rust).
    items: Vec<Option<(String, String, bool)>>,
    /// What each glue function reaches, computed once.
    reach: HashMap<usize, Rc<Reach>>,
    /// Glue indirect calls already counted for a caller item: one site each, however often reached.
    counted: HashSet<(String, usize, usize)>,
}

impl Reader {
    /// A reader for the given scope crates.
    pub fn new(scope: BTreeSet<String>) -> Reader {
        Reader {
            scope,
            seen: HashSet::new(),
            ordinals: BTreeMap::new(),
            edges: Vec::new(),
            sites: Vec::new(),
            external: Vec::new(),
        }
    }

    /// Reads one `.ll` file.
    pub fn read(&mut self, text: &str) {
        let functions = ir::functions(text);
        let mut defined = HashMap::new();
        let mut items = Vec::with_capacity(functions.len());
        for (i, function) in functions.iter().enumerate() {
            defined.entry(function.symbol.clone()).or_insert(i);
            items.push(self.resolve(&function.symbol));
        }
        let mut file = File { functions, defined, items, reach: HashMap::new(), counted: HashSet::new() };
        for i in 0..file.functions.len() {
            // A function that is not a Rust symbol cannot be attributed to an item.
            let Some((demangled, caller, true)) = file.items[i].clone() else { continue };
            if !self.seen.insert(demangled) {
                continue;
            }
            let own = file.functions[i].symbol.clone();
            for c in 0..file.functions[i].calls.len() {
                match &file.functions[i].calls[c] {
                    Call::Indirect => self.site(&caller),
                    Call::Direct(symbol) if symbol.starts_with("llvm.") => {}
                    Call::Direct(symbol) => {
                        let symbol = symbol.clone();
                        match self.resolve(&symbol) {
                            Some((_, callee, true)) => self.edge(&caller, &own, callee, &symbol),
                            Some((_, callee, false)) => {
                                self.external.push(CallEdge { caller: caller.clone(), callee });
                                self.through_glue(&mut file, &caller, &own, &symbol);
                            }
                            // Not a Rust symbol (C, allocator shim): outside the scope by name.
                            None => self.external.push(CallEdge { caller: caller.clone(), callee: symbol }),
                        }
                    }
                }
            }
        }
    }

    /// The demangled name of `symbol`, its item, and whether the item is in scope.
    fn resolve(&self, symbol: &str) -> Option<(String, String, bool)> {
        let demangled = names::demangle(symbol)?;
        let item = names::item(&demangled, &self.scope);
        let in_scope = self.scope.contains(names::crate_of(&item));
        Some((demangled, item, in_scope))
    }

    fn site(&mut self, caller: &str) {
        let ordinal = self.ordinals.entry(caller.to_owned()).or_insert(0);
        *ordinal += 1;
        self.sites.push(DynamicSite { caller: caller.to_owned(), site: *ordinal });
    }

    /// An edge, unless it joins two parts of one folded item (a closure called by its function); a
    /// function calling its own symbol is an edge.
    fn edge(&mut self, caller: &str, caller_symbol: &str, callee: String, callee_symbol: &str) {
        if callee != caller || callee_symbol == caller_symbol {
            self.edges.push(CallEdge { caller: caller.to_owned(), callee });
        }
    }

    /// Follows a call to out-of-scope `symbol` if this file defines it (glue).
    fn through_glue(&mut self, file: &mut File, caller: &str, caller_symbol: &str, symbol: &str) {
        let Some(&start) = file.defined.get(symbol) else { return };
        let reach = match file.reach.get(&start) {
            Some(reach) => Rc::clone(reach),
            None => {
                let reach = Rc::new(reach(&file.functions, &file.defined, &file.items, start));
                file.reach.insert(start, Rc::clone(&reach));
                reach
            }
        };
        for callee_symbol in &reach.symbols {
            if let Some((_, callee, true)) = self.resolve(callee_symbol) {
                self.edge(caller, caller_symbol, callee, callee_symbol);
            }
        }
        for &(function, call) in &reach.indirect {
            if file.counted.insert((caller.to_owned(), function, call)) {
                self.site(caller);
            }
        }
    }
}

/// Walks glue from `start` (depth first, in IR order, each glue function once): the in-scope symbols
/// it calls and the number of indirect calls it makes. In-scope functions end the walk: their own calls
/// are theirs.
fn reach(
    functions: &[Function],
    defined: &HashMap<String, usize>,
    items: &[Option<(String, String, bool)>],
    start: usize,
) -> Reach {
    let mut out = Reach::default();
    let mut seen_symbols = HashSet::new();
    let mut visited = HashSet::from([start]);
    let mut stack = vec![start];
    while let Some(at) = stack.pop() {
        let mut next = Vec::new();
        for (c, call) in functions[at].calls.iter().enumerate() {
            match call {
                Call::Indirect => out.indirect.push((at, c)),
                Call::Direct(symbol) if symbol.starts_with("llvm.") => {}
                Call::Direct(symbol) => match defined.get(symbol) {
                    Some(&i) if matches!(items[i], Some((_, _, true))) => {
                        if seen_symbols.insert(symbol.clone()) {
                            out.symbols.push(symbol.clone());
                        }
                    }
                    Some(&i) => {
                        if visited.insert(i) {
                            next.push(i);
                        }
                    }
                    // Declared only: an in-scope item of another crate is reached; anything else ends here.
                    None => {
                        if seen_symbols.insert(symbol.clone()) {
                            out.symbols.push(symbol.clone());
                        }
                    }
                },
            }
        }
        stack.extend(next.into_iter().rev());
    }
    out
}
