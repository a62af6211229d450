//! The diff record ([CB-7]), its ten counts ([CF-4]) and the four ratios a consumer divides ([CF-5]).
//!
//! [CB-7]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CF-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CF-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use std::fmt;

use serde_json::{Map, Value};

use crate::error::{Error, Role};
use crate::json::{self, Obj};
use crate::vocab::{Algorithm, DiffClass, EdgeKind, Sign};

/// One class entry: an edge label, plus both signs for `changed_sign`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiffEntry {
    /// The source node id.
    pub from: String,
    /// The target node id.
    pub to: String,
    /// The edge kind.
    pub kind: EdgeKind,
    /// `(declared_sign, observed_sign)` for a `changed_sign` entry.
    pub signs: Option<(Sign, Sign)>,
}

/// The ten counts, in [CF-4] order.
///
/// [CF-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub const COUNTS: [(&str, &str); 10] = [
    ("declared_edges", "labels in the declared graph"),
    ("observed_edges", "labels in the observed graph"),
    ("declared_and_observed", "labels in both"),
    ("declared_endpoint_covered", "declared labels whose both ends are observed node ids"),
    ("observed_endpoint_declared", "observed labels whose both ends are declared node ids"),
    ("declared_nodes", "distinct node ids of the declared graph"),
    ("observed_nodes", "distinct node ids of the observed graph"),
    ("nodes_in_both", "node ids in both graphs"),
    ("declared_sign_only", "labels in both, declared sign supplied, observed unset"),
    ("observed_sign_only", "labels in both, observed sign supplied, declared unset"),
];

/// The coverage counts as the record carries them, in [`COUNTS`] order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Coverage(pub [u64; 10]);

impl Coverage {
    /// The count with this [CF-4] name.
    ///
    /// [CF-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn get(&self, name: &str) -> u64 {
        COUNTS.iter().position(|(n, _)| *n == name).map_or(0, |i| self.0[i])
    }

    /// The four [CF-5] ratios, in the order the page prints them.
    ///
    /// [CF-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn ratios(&self) -> [Ratio; 4] {
        let g = |n| self.get(n);
        let both = g("declared_and_observed");
        [
            Ratio {
                name: "declared edges observed",
                definition: "declared_and_observed / declared_edges",
                numerator: both,
                denominator: g("declared_edges"),
            },
            Ratio {
                name: "observed edges declared",
                definition: "declared_and_observed / observed_edges",
                numerator: both,
                denominator: g("observed_edges"),
            },
            Ratio {
                name: "completeness",
                definition: "observed_endpoint_declared / observed_edges",
                numerator: g("observed_endpoint_declared"),
                denominator: g("observed_edges"),
            },
            Ratio {
                name: "endpoint coverage",
                definition: "declared_endpoint_covered / declared_edges",
                numerator: g("declared_endpoint_covered"),
                denominator: g("declared_edges"),
            },
        ]
    }
}

/// A ratio of two counts, printed as `n/d (p%)`, or `n/0 (undefined)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ratio {
    /// The ratio's name.
    pub name: &'static str,
    /// Which counts divide.
    pub definition: &'static str,
    /// The numerator count.
    pub numerator: u64,
    /// The denominator count.
    pub denominator: u64,
}

impl fmt::Display for Ratio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (n, d) = (self.numerator, self.denominator);
        if d == 0 {
            return write!(f, "{n}/0 (undefined)");
        }
        // Integer arithmetic, rounded half up to one decimal: the same bytes on every platform.
        let tenths = (u128::from(n) * 1000 + u128::from(d) / 2) / u128::from(d);
        write!(f, "{n}/{d} ({}.{}%)", tenths / 10, tenths % 10)
    }
}

/// A diff record, schema 3.
#[derive(Clone, Debug, PartialEq)]
pub struct DiffRecord {
    /// The digest the record names.
    pub algorithm: Algorithm,
    /// The entries of each class, indexed by [`DiffClass::index`], in file order.
    pub classes: [Vec<DiffEntry>; 4],
    /// The ten counts.
    pub coverage: Coverage,
    /// The window, as written.
    pub window: Map<String, Value>,
}

impl DiffRecord {
    /// Reads a diff record, refusing anything that is not exactly the [CB-7] format.
    ///
    /// [CB-7]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn from_json(bytes: &[u8]) -> Result<Self, Error> {
        let role = Role::Diff;
        let doc = json::parse(role, bytes)?;
        let top = Obj::new(role, "", &doc)?;
        top.schema_version_3()?;
        top.exact(&["algorithm", "classes", "coverage", "schema_version", "window"])?;
        let algorithm = top.vocab::<Algorithm>("algorithm")?;
        let class_obj = Obj::new(role, "classes", top.get("classes")?)?;
        let names: Vec<&str> = DiffClass::ALL.iter().map(|c| c.name()).collect();
        class_obj.exact(&names)?;
        let mut classes: [Vec<DiffEntry>; 4] = Default::default();
        for &class in DiffClass::ALL {
            for (i, v) in class_obj.array(class.name())?.iter().enumerate() {
                let o = Obj::new(role, class_obj.item_path(class.name(), i), v)?;
                let signs = if class == DiffClass::ChangedSign {
                    o.exact(&["declared_sign", "from", "kind", "observed_sign", "to"])?;
                    Some((o.vocab("declared_sign")?, o.vocab("observed_sign")?))
                } else {
                    o.exact(&["from", "kind", "to"])?;
                    None
                };
                let entry = DiffEntry {
                    from: o.str("from")?.to_owned(),
                    to: o.str("to")?.to_owned(),
                    kind: o.vocab("kind")?,
                    signs,
                };
                classes[class.index()].push(entry);
            }
        }
        let cov = Obj::new(role, "coverage", top.get("coverage")?)?;
        let names: Vec<&str> = COUNTS.iter().map(|(n, _)| *n).collect();
        cov.exact(&names)?;
        let mut counts = [0; 10];
        for (slot, name) in counts.iter_mut().zip(&names) {
            *slot = cov.count(name)?;
        }
        let window = top.map("window")?.clone();
        Ok(DiffRecord { algorithm, classes, coverage: Coverage(counts), window })
    }

    /// Every entry with its class, classes in [`DiffClass::ALL`] order.
    pub fn entries(&self) -> impl Iterator<Item = (DiffClass, &DiffEntry)> {
        DiffClass::ALL.iter().flat_map(move |&c| self.classes[c.index()].iter().map(move |e| (c, e)))
    }
}
