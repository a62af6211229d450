//! The closed vocabularies of the exports ([CA-2]..[CA-6], [CC-1]). A value outside them is refused, never
//! mapped to a neighbour.
//!
//! [CA-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CA-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CC-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

/// A closed vocabulary read from an export string.
pub trait Vocabulary: Sized + Copy {
    /// What the vocabulary names, for messages.
    const WHAT: &'static str;
    /// The value an export string names, if it is in the vocabulary.
    fn from_name(s: &str) -> Option<Self>;
}

macro_rules! vocabulary {
    ($(#[$doc:meta])* $name:ident, $what:literal, { $($variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name {
            $(
                #[doc = concat!("`", $text, "`")]
                $variant,
            )+
        }

        impl $name {
            /// Every value, in the order the specification lists them.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            /// The value as the export writes it.
            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

        }

        impl Vocabulary for $name {
            const WHAT: &'static str = $what;

            fn from_name(s: &str) -> Option<Self> {
                match s {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }
        }
    };
}

vocabulary!(
    /// A node kind ([CA-2]).
    ///
    /// [CA-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    NodeKind, "node kind", {
        Server => "server",
        Tool => "tool",
        Resource => "resource",
        Prompt => "prompt",
        Process => "process",
        Module => "module",
    }
);

vocabulary!(
    /// A node level ([CA-4]).
    ///
    /// [CA-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    Level, "level", {
        Mfa => "mfa",
        Module => "module",
        Boundary => "boundary",
        Server => "server",
    }
);

vocabulary!(
    /// An edge kind ([CA-3]).
    ///
    /// [CA-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    EdgeKind, "edge kind", {
        Invoke => "invoke",
        Read => "read",
        Message => "message",
        Supervise => "supervise",
    }
);

vocabulary!(
    /// An edge provenance ([CA-5]).
    ///
    /// [CA-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    Provenance, "provenance", {
        Declared => "declared",
        Observed => "observed",
    }
);

vocabulary!(
    /// An edge sign, schema 2 and 3 vocabulary ([CA-6], [CC-13]).
    ///
    /// [CA-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    /// [CC-13]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    Sign, "sign", {
        Allow => "allow",
        Deny => "deny",
        Hold => "hold",
        Ungoverned => "ungoverned",
        Unset => "unset",
    }
);

vocabulary!(
    /// The digest an export names ([CC-1]).
    ///
    /// [CC-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    Algorithm, "algorithm", {
        Sha256 => "sha256",
        Sha384 => "sha384",
        Sha512 => "sha512",
    }
);

vocabulary!(
    /// A diff class ([CF-3]), in the order the views draw and list them.
    ///
    /// [CF-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    DiffClass, "diff class", {
        DeclaredAndObserved => "declared_and_observed",
        DeclaredNeverObserved => "declared_never_observed",
        ObservedButUndeclared => "observed_but_undeclared",
        ChangedSign => "changed_sign",
    }
);

impl DiffClass {
    /// The class colour every view uses ([CJ-2]).
    ///
    /// [CJ-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn colour(self) -> &'static str {
        match self {
            DiffClass::DeclaredAndObserved => "#2a9d8f",
            DiffClass::DeclaredNeverObserved => "#8d99ae",
            DiffClass::ObservedButUndeclared => "#e63946",
            DiffClass::ChangedSign => "#f4a261",
        }
    }

    /// The legend text for the class.
    pub fn legend(self) -> &'static str {
        match self {
            DiffClass::DeclaredAndObserved => "declared and observed",
            DiffClass::DeclaredNeverObserved => "declared, never observed (dead authority)",
            DiffClass::ObservedButUndeclared => "observed but undeclared (drift)",
            DiffClass::ChangedSign => "changed sign (both signs supplied, different)",
        }
    }

    /// The class's position in [`DiffClass::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}
