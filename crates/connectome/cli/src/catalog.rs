//! The catalog export a server writes (docs/connectome.md CB-9, `Server::catalog_export`), read strictly,
//! and the fold of a handler's type name into the item and module the call facts name (CB-10).

use connectome_graph::declared::{DeclaredCatalog, DeclaredTool};
use serde_json::{Map, Value};

/// The `format` member a catalog export carries.
pub const FORMAT: &str = "mcp-kernel-catalog";
/// The only `version` this program reads.
pub const VERSION: u64 = 1;

/// A catalog item's link: the handler's type name for a typed registration, `None` otherwise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Linked {
    /// The tool's name, the resource's uri, the template's uri template or the prompt's name.
    pub name: String,
    /// `std::any::type_name` of the handler (`served_by: "typed"`), else `None`.
    pub handler: Option<String>,
}

/// What a reader link names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    /// A resource or a resource template.
    Resource,
    /// A prompt.
    Prompt,
}

/// A catalog export as read.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    /// The server's name (`server`).
    pub server: String,
    /// The catalog for the declared builder.
    pub declared: DeclaredCatalog,
    /// Each tool's link, sorted by name.
    pub tools: Vec<Linked>,
    /// Each resource's and template's link, then each prompt's.
    pub readers: Vec<(Reader, Linked)>,
}

/// Why a catalog export was refused: one line that names a position, never a value of the file.
fn bad(at: &str, what: &str) -> String {
    format!("{at}: {what}")
}

/// The object at `at` with exactly the members `required` and any of `optional`.
fn members<'a>(
    value: &'a Value,
    at: &str,
    required: &[&str],
    optional: &[&str],
) -> Result<&'a Map<String, Value>, String> {
    let object = value.as_object().ok_or_else(|| bad(at, "not an object"))?;
    if let Some(missing) = required.iter().find(|key| !object.contains_key(**key)) {
        return Err(bad(at, &format!("no member {missing}")));
    }
    if object.keys().any(|key| !required.contains(&key.as_str()) && !optional.contains(&key.as_str())) {
        return Err(bad(at, "a member this version does not have"));
    }
    Ok(object)
}

/// The string member `key` of `object`.
fn text(object: &Map<String, Value>, at: &str, key: &str) -> Result<String, String> {
    let text = object
        .get(key)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| bad(at, &format!("{key} is not a string")))?;
    if text.is_empty() {
        return Err(bad(at, &format!("{key} is empty")));
    }
    Ok(text)
}

/// A JSON document read with every object's members named once: a member named twice is refused
/// instead of the last one silently winning.
struct Strict(Value);

impl<'de> serde::Deserialize<'de> for Strict {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StrictVisitor).map(Strict)
    }
}

/// Builds a [`Value`], refusing a repeated member name.
struct StrictVisitor;

impl<'de> serde::de::Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JSON")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Strict(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let Strict(value) = map.next_value()?;
            if object.insert(key, value).is_some() {
                return Err(serde::de::Error::custom(REPEATED));
            }
        }
        Ok(Value::Object(object))
    }
}

/// The refusal of a member named twice in one object (the name is never shown).
const REPEATED: &str = "a member named twice in one object";

/// Refuses an item whose `key` an earlier item of its section has (the value is never shown).
fn once(seen: &mut std::collections::HashSet<String>, at: &str, key: &str, name: &str) -> Result<(), String> {
    if seen.insert(name.to_owned()) {
        Ok(())
    } else {
        Err(bad(at, &format!("its {key} is an earlier item's")))
    }
}

/// One item's link: `served_by` is `typed` (with a `handler`), `untyped` or `host` (without).
fn link(object: &Map<String, Value>, at: &str, name: String) -> Result<Linked, String> {
    let handler = match text(object, at, "served_by")?.as_str() {
        "typed" => Some(text(object, at, "handler")?),
        "untyped" | "host" if !object.contains_key("handler") => None,
        "untyped" | "host" => return Err(bad(at, "a handler without served_by typed")),
        _ => return Err(bad(at, "served_by is not typed, untyped or host")),
    };
    Ok(Linked { name, handler })
}

/// The array member `key` of the document.
fn list<'a>(document: &'a Map<String, Value>, key: &str) -> Result<&'a [Value], String> {
    document.get(key).and_then(Value::as_array).map(Vec::as_slice).ok_or_else(|| bad(key, "not an array"))
}

/// Reads a catalog export (CB-9) strictly: the format and version first, then every member.
pub fn read(bytes: &[u8]) -> Result<Catalog, String> {
    let Strict(value) = serde_json::from_slice(bytes).map_err(|e| {
        let why = match e.classify() {
            serde_json::error::Category::Eof => "it ends early",
            serde_json::error::Category::Data => REPEATED,
            _ => "a syntax error",
        };
        format!("not JSON ({why} at line {}, column {})", e.line(), e.column())
    })?;
    let top = ["format", "prompts", "resource_templates", "resources", "server", "tools", "version"];
    let object = value.as_object().ok_or("not a catalog export: not a JSON object")?;
    if object.get("format").and_then(Value::as_str) != Some(FORMAT) {
        return Err(format!("not a catalog export: format is not {FORMAT}"));
    }
    if object.get("version").and_then(Value::as_u64) != Some(VERSION) {
        return Err(format!("catalog export version is not {VERSION}"));
    }
    let document = members(&value, "the catalog export", &top, &[])?;
    let mut catalog =
        Catalog { server: text(document, "the catalog export", "server")?, ..Catalog::default() };
    let mut seen = std::collections::HashSet::new();
    for (i, item) in list(document, "tools")?.iter().enumerate() {
        let at = format!("tools[{i}]");
        let object = members(item, &at, &["mode", "name", "served_by"], &["command_class", "handler"])?;
        let name = text(object, &at, "name")?;
        once(&mut seen, &at, "name", &name)?;
        let mut tool = DeclaredTool::new(name.clone(), text(object, &at, "mode")?);
        if object.contains_key("command_class") {
            tool = tool.with_command_class(text(object, &at, "command_class")?);
        }
        catalog.declared.tools.push(tool);
        catalog.tools.push(link(object, &at, name)?);
    }
    let sections: [(&str, &str, &mut Vec<String>, Reader); 3] = [
        ("resources", "uri", &mut catalog.declared.resources, Reader::Resource),
        ("resource_templates", "uri_template", &mut catalog.declared.resource_templates, Reader::Resource),
        ("prompts", "name", &mut catalog.declared.prompts, Reader::Prompt),
    ];
    for (section, key, names, reader) in sections {
        let mut seen = std::collections::HashSet::new();
        for (i, item) in list(document, section)?.iter().enumerate() {
            let at = format!("{section}[{i}]");
            let object = members(item, &at, &[key, "served_by"], &["handler"])?;
            let name = text(object, &at, key)?;
            once(&mut seen, &at, key, &name)?;
            names.push(name.clone());
            catalog.readers.push((reader, link(object, &at, name)?));
        }
    }
    catalog.tools.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(catalog)
}

/// The item a handler's type name stands for, as the call facts name items (CB-10), or `None` when it
/// names none: generic arguments are dropped (`a::m::f<u32>` is `a::m::f`), a closure is its enclosing
/// function (`a::m::f::{{closure}}` is `a::m::f`), a method whose type segment starts with an upper-case
/// letter is `module::Type.method`, and a qualified path (`<T as Trait>::m`) or a path of one segment
/// is none.
pub fn item_of(type_name: &str) -> Option<String> {
    if type_name.starts_with('<') {
        return None;
    }
    // Drop generic arguments: everything between balanced angle brackets.
    let mut plain = String::with_capacity(type_name.len());
    let mut depth = 0_usize;
    for c in type_name.chars() {
        match c {
            '<' => depth += 1,
            '>' => depth = depth.checked_sub(1)?,
            _ if depth == 0 => plain.push(c),
            _ => {}
        }
    }
    if depth != 0 {
        return None;
    }
    let segments: Vec<&str> = plain.split("::").take_while(|segment| !segment.starts_with('{')).collect();
    let is_ident = |s: &&str| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_');
    if segments.len() < 2 || !segments.iter().all(is_ident) {
        return None;
    }
    let n = segments.len();
    if n >= 3 && segments[n - 2].starts_with(|c: char| c.is_ascii_uppercase()) {
        return Some(format!("{}::{}.{}", segments[..n - 2].join("::"), segments[n - 2], segments[n - 1]));
    }
    Some(segments.join("::"))
}

/// The module of an item as [`item_of`] writes it: the path before the last `::`.
pub fn module_of(item: &str) -> &str {
    item.rsplit_once("::").map_or(item, |(module, _)| module)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cb10_a_handler_type_name_folds_as_the_facts_fold_items() {
        let cases = [
            ("notes::export::export_notes", Some("notes::export::export_notes")),
            ("notes::host::tools::{{closure}}", Some("notes::host::tools")),
            ("a::m::f::{{closure}}::{{closure}}", Some("a::m::f")),
            ("a::m::f<u32>", Some("a::m::f")),
            ("a::m::f<alloc::vec::Vec<u8>>::{{closure}}", Some("a::m::f")),
            ("a::m::Store::read", Some("a::m::Store.read")),
            ("<a::m::Store as a::Tr>::read", None),
            ("main", None),
            ("a::m::f<u32", None),
            ("", None),
        ];
        for (type_name, item) in cases {
            assert_eq!(item_of(type_name).as_deref(), item, "{type_name}");
        }
        assert_eq!(module_of("notes::host::tools"), "notes::host");
        assert_eq!(module_of("a::m::Store.read"), "a::m");
    }

    #[test]
    fn cb9_a_catalog_export_is_read_strictly() {
        let good = br#"{"format":"mcp-kernel-catalog","prompts":[],"resource_templates":[],"resources":[],"server":"s","tools":[{"handler":"a::f","mode":"read_only","name":"t","served_by":"typed"}],"version":1}"#;
        let catalog = read(good).unwrap();
        assert_eq!(catalog.tools, vec![Linked { name: "t".into(), handler: Some("a::f".into()) }]);
        let text = String::from_utf8(good.to_vec()).unwrap();
        let refusals = [
            (
                text.replace("mcp-kernel-catalog", "other"),
                "not a catalog export: format is not mcp-kernel-catalog",
            ),
            (text.replace("\"version\":1", "\"version\":2"), "catalog export version is not 1"),
            (text.replace("\"server\":\"s\",", ""), "the catalog export: no member server"),
            (
                text.replace("\"served_by\":\"typed\"", "\"served_by\":\"x\""),
                "tools[0]: served_by is not typed, untyped or host",
            ),
            (
                text.replace("\"served_by\":\"typed\"", "\"served_by\":\"host\""),
                "tools[0]: a handler without served_by typed",
            ),
            (
                text.replace("\"mode\"", "\"extra\":1,\"mode\""),
                "tools[0]: a member this version does not have",
            ),
            ("[".to_owned(), "not JSON (it ends early at line 1, column 1)"),
            (
                text.replace("{\"format\"", "{\"format\":\"x\",\"format\""),
                "not JSON (a member named twice in one object at line 1, column 43)",
            ),
            (text.replace("\"name\":\"t\"", "\"name\":\"\""), "tools[0]: name is empty"),
            (
                text.replace("\"tools\":[{", "\"tools\":[{\"handler\":\"a::g\",\"mode\":\"read_only\",\"name\":\"t\",\"served_by\":\"typed\"},{"),
                "tools[1]: its name is an earlier item's",
            ),
        ];
        for (bytes, reason) in refusals {
            assert_eq!(read(bytes.as_bytes()).unwrap_err(), reason, "{bytes}");
        }
    }
}
