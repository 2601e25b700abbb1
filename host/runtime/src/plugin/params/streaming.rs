//! A tool's schema compiled to a validator that reads the params text once and allocates
//! nothing: the check every call makes before its plugin runs.
//!
//! Building a `serde_json::Value` of ~1 KB of params costs several µs — most of a short call's
//! host overhead — and the `jsonschema` validator needs one. This validator walks the text with
//! serde instead, against the keywords the SDK's schemas use (types, properties, required,
//! additional properties, items, bounds, string enums, local `$ref`s, `anyOf`/`oneOf`/`allOf`:
//! a combinator's branches each read the value's own slice again). A schema with any other
//! keyword, or another draft, is not compiled here: its tool is checked by `jsonschema` alone.
//!
//! It only ever *accepts*: a document it refuses goes to `jsonschema`, which decides and
//! names what is wrong, so a difference between the two can cost time, never an answer. That
//! it never accepts what `jsonschema` refuses is tested against every plugin's schemas
//! (`tests/all/params.rs`).

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

/// Schema nodes, nested ones by index, [`ANY_NODE`] first.
pub(super) struct Compiled {
    nodes: Vec<Node>,
    root: Id,
}

type Id = usize;

/// The `true` schema: any value.
const ANY_NODE: Id = 0;

#[derive(Default)]
struct Node {
    /// Allowed JSON types (a [`Kind`] bitset); all when the schema says no `type`.
    types: u8,
    /// A `false` schema: nothing is valid.
    never: bool,
    /// `enum` / `const`: the values allowed (strings, booleans, null).
    one_of_values: Option<Vec<Literal>>,
    min: Option<Bound>,
    max: Option<Bound>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    /// Every name in `properties` or `required`, sorted: its schema if it is a property (a
    /// required name that is not one is checked as an additional property), and whether it
    /// is required. At most 64: an object's check marks the names it saw in a `u64`.
    names: Vec<Name>,
    /// `additionalProperties`: `None` allows any.
    additional: Option<Id>,
    items: Option<Id>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    /// `$ref`s and `allOf`: every one must hold.
    all_of: Vec<Id>,
    any_of: Vec<Id>,
    one_of: Vec<Id>,
    /// Only a number's type to check (no bounds, values or combinators): its text is read
    /// without being converted, which is most of what a float costs to parse.
    number_text: bool,
}

struct Name {
    name: String,
    /// [`fingerprint`] of the name: keys are matched on it, without a string comparison for
    /// names of up to seven bytes (which it holds whole).
    key: u64,
    schema: Option<Id>,
    required: bool,
}

/// A name's length and its first seven bytes, in one word.
fn fingerprint(name: &str) -> u64 {
    let bytes = name.as_bytes();
    let mut key = (bytes.len().min(255) as u64) << 56;
    for (i, b) in bytes.iter().take(7).enumerate() {
        key |= u64::from(*b) << (8 * i);
    }
    key
}

#[derive(Clone, Copy)]
struct Bound {
    value: f64,
    exclusive: bool,
}

#[derive(PartialEq)]
enum Literal {
    Null,
    Bool(bool),
    Str(String),
}

#[derive(Clone, Copy)]
#[repr(u8)]
enum Kind {
    Null = 1,
    Bool = 2,
    Integer = 4,
    Number = 8,
    String = 16,
    Array = 32,
    Object = 64,
}
const ANY: u8 = 127;

/// Keywords that only annotate: they never make a document invalid.
const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$comment",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "format",
    "$defs",
    "definitions",
];

/// Past this an integer bound is compared as a float, which could round: not compiled.
const EXACT: f64 = 9_007_199_254_740_992.0;

impl Compiled {
    /// `schema` compiled, or `None` when it uses what this validator does not read.
    pub(super) fn compile(schema: &Value) -> Option<Self> {
        // Only 2020-12 (also `jsonschema`'s default): there `format` is an annotation and
        // `items` one schema.
        match schema.get("$schema").map(Value::as_str) {
            None | Some(Some("https://json-schema.org/draft/2020-12/schema")) => {}
            Some(_) => return None,
        }
        let any = Node { types: ANY, ..Node::default() };
        let mut compiler = Compiler { root: schema, nodes: vec![any], refs: Vec::new() };
        let root = compiler.node(schema)?;
        Some(Self { nodes: compiler.nodes, root })
    }

    /// Whether `text` is valid; `false` also for text that is not JSON. At the top level a
    /// field given as `null` counts as left out, as the host reads params.
    pub(super) fn accepts(&self, text: &str) -> bool {
        self.accepts_at(self.root, text, true)
    }

    fn accepts_at(&self, id: Id, text: &str, top: bool) -> bool {
        self.read(Check { schema: self, id, top, field: false, depth: 0 }, text, false).is_some()
    }

    /// `check` of the whole of `text` (`Plain`: its node's own keywords only): whether it is a
    /// null field, or `None` when refused.
    fn read(&self, check: Check<'_>, text: &str, plain: bool) -> Option<bool> {
        if check.depth > MAX_DEPTH {
            return None;
        }
        let mut de = serde_json::Deserializer::from_str(text);
        let is_null = if plain { de.deserialize_any(check) } else { check.deserialize(&mut de) }.ok()?;
        de.end().ok().map(|()| is_null)
    }
}

struct Compiler<'a> {
    root: &'a Value,
    nodes: Vec<Node>,
    /// `$ref` pointers compiled so far, and their nodes (a recursive schema refers back).
    refs: Vec<(String, Id)>,
}

impl<'a> Compiler<'a> {
    fn node(&mut self, schema: &'a Value) -> Option<Id> {
        let id = self.nodes.len();
        self.nodes.push(Node::default());
        let node = match schema {
            Value::Bool(true) => Node { types: ANY, ..Node::default() },
            Value::Bool(false) => Node { never: true, ..Node::default() },
            Value::Object(keywords) => {
                let mut node = Node { types: ANY, ..Node::default() };
                for (keyword, value) in keywords {
                    match keyword.as_str() {
                        k if ANNOTATIONS.contains(&k) => {}
                        "type" => node.types = types(value)?,
                        "enum" => {
                            node.one_of_values =
                                Some(value.as_array()?.iter().map(literal).collect::<Option<_>>()?)
                        }
                        "const" => node.one_of_values = Some(vec![literal(value)?]),
                        "minimum" => node.min = bound(value, false)?.max_of(node.min),
                        "exclusiveMinimum" => node.min = bound(value, true)?.max_of(node.min),
                        "maximum" => node.max = bound(value, false)?.min_of(node.max),
                        "exclusiveMaximum" => node.max = bound(value, true)?.min_of(node.max),
                        "minLength" => node.min_length = Some(value.as_u64()?),
                        "maxLength" => node.max_length = Some(value.as_u64()?),
                        "minItems" => node.min_items = Some(value.as_u64()?),
                        "maxItems" => node.max_items = Some(value.as_u64()?),
                        "required" => {
                            for name in value.as_array()? {
                                node.name(name.as_str()?).required = true;
                            }
                        }
                        "properties" => {
                            for (name, sub) in value.as_object()? {
                                let schema = self.node(sub)?;
                                node.name(name).schema = Some(schema);
                            }
                        }
                        "additionalProperties" => node.additional = Some(self.node(value)?),
                        "items" => node.items = Some(self.node(value)?),
                        "$ref" => {
                            let target = self.reference(value.as_str()?)?;
                            node.all_of.push(target);
                        }
                        "allOf" | "anyOf" | "oneOf" => {
                            let mut branches = Vec::new();
                            for sub in value.as_array()? {
                                branches.push(self.node(sub)?);
                            }
                            match keyword.as_str() {
                                "allOf" => node.all_of.extend(branches),
                                "anyOf" => node.any_of = branches,
                                _ => node.one_of = branches,
                            }
                        }
                        _ => return None,
                    }
                }
                if node.names.len() > 64 {
                    return None;
                }
                node.number_text = node.is_only_number();
                // Only a `$ref` (an SDK schema's every struct field): the target itself, read
                // in the same pass — not a combinator that reads the value's text again.
                if let [target] = node.all_of[..]
                    && node.is_only_combinators()
                    && node.any_of.is_empty()
                    && node.one_of.is_empty()
                {
                    self.nodes[id] = Node { types: ANY, all_of: vec![target], ..Node::default() };
                    return Some(target);
                }
                node
            }
            _ => return None,
        };
        self.nodes[id] = node;
        Some(id)
    }

    /// A local reference (`#`, `#/$defs/Name`, `#/definitions/Name`); others are not compiled.
    fn reference(&mut self, pointer: &str) -> Option<Id> {
        if let Some(&(_, id)) = self.refs.iter().find(|(p, _)| p == pointer) {
            return Some(id);
        }
        let path = pointer.strip_prefix('#')?;
        let target = if path.is_empty() {
            self.root
        } else {
            let mut parts = path.strip_prefix('/')?.split('/');
            let (container, name) = (parts.next()?, parts.next()?);
            if parts.next().is_some() || !matches!(container, "$defs" | "definitions") || name.contains('~') {
                return None;
            }
            self.root.get(container)?.get(name)?
        };
        // Registered before it is compiled: a schema that refers to itself ends here (at a
        // node that, should the target turn out to be only a reference, refers on to it).
        let id = self.nodes.len();
        self.refs.push((pointer.to_owned(), id));
        let compiled = self.node(target)?;
        if compiled != id {
            if let Some(entry) = self.refs.iter_mut().find(|(p, _)| p == pointer) {
                entry.1 = compiled;
            }
            self.nodes[id] = Node { types: ANY, all_of: vec![compiled], ..Node::default() };
        }
        Some(compiled)
    }
}

fn types(value: &Value) -> Option<u8> {
    let one = |name: &str| {
        Some(match name {
            "null" => Kind::Null,
            "boolean" => Kind::Bool,
            "integer" => Kind::Integer,
            "number" => Kind::Number,
            "string" => Kind::String,
            "array" => Kind::Array,
            "object" => Kind::Object,
            _ => return None,
        } as u8)
    };
    match value {
        Value::String(name) => one(name),
        Value::Array(names) => names.iter().try_fold(0, |set, n| Some(set | one(n.as_str()?)?)),
        _ => None,
    }
}

fn literal(value: &Value) -> Option<Literal> {
    match value {
        Value::Null => Some(Literal::Null),
        Value::Bool(b) => Some(Literal::Bool(*b)),
        Value::String(s) => Some(Literal::Str(s.clone())),
        // Numbers compare across their representations in `jsonschema`: not compiled.
        _ => None,
    }
}

fn bound(value: &Value, exclusive: bool) -> Option<Bound> {
    let value = value.as_f64()?;
    (value.abs() < EXACT).then_some(Bound { value, exclusive })
}

impl Node {
    /// Whether it checks nothing of its own: any type, value, name or item.
    fn is_only_combinators(&self) -> bool {
        self.types == ANY
            && !self.never
            && self.one_of_values.is_none()
            && self.min.is_none()
            && self.max.is_none()
            && self.min_length.is_none()
            && self.max_length.is_none()
            && self.names.is_empty()
            && self.additional.is_none()
            && self.items.is_none()
            && self.min_items.is_none()
            && self.max_items.is_none()
    }

    /// Whether its only check is a numeric type (see `number_text`).
    fn is_only_number(&self) -> bool {
        const NUMERIC: u8 = Kind::Integer as u8 | Kind::Number as u8;
        self.types != 0
            && self.types & !NUMERIC == 0
            && !self.never
            && self.one_of_values.is_none()
            && self.min.is_none()
            && self.max.is_none()
            && self.all_of.is_empty()
            && self.any_of.is_empty()
            && self.one_of.is_empty()
    }

    /// The entry of `name`, made if it has none.
    fn name(&mut self, name: &str) -> &mut Name {
        let index = match self.names.binary_search_by(|n| n.name.as_str().cmp(name)) {
            Ok(index) => index,
            Err(index) => {
                let key = fingerprint(name);
                self.names.insert(index, Name { name: name.to_owned(), key, schema: None, required: false });
                index
            }
        };
        &mut self.names[index]
    }
}

impl Bound {
    /// Of two lower bounds, the tighter: both hold.
    fn max_of(self, other: Option<Bound>) -> Option<Bound> {
        Some(match other {
            Some(o) if o.value > self.value || (o.value == self.value && o.exclusive) => o,
            _ => self,
        })
    }

    fn min_of(self, other: Option<Bound>) -> Option<Bound> {
        Some(match other {
            Some(o) if o.value < self.value || (o.value == self.value && o.exclusive) => o,
            _ => self,
        })
    }
}

/// Why reading stopped: the document is not valid against the node (or not JSON).
#[derive(Debug)]
struct Refused;

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("refused")
    }
}

/// One value checked against one node; `Ok(true)` when it is a top-level field given as `null`
/// (left out: nothing checked, not counted as present).
struct Check<'s> {
    schema: &'s Compiled,
    id: Id,
    /// The document's own top level: its `null` fields are left out.
    top: bool,
    /// A field of the top level.
    field: bool,
    /// Nodes entered so far: a schema that refers to itself without reading deeper
    /// (`{"$ref": "#"}`) is refused here, not followed for ever.
    depth: u16,
}

/// Nodes a check enters at most (JSON nesting is bounded by serde_json's 128 besides).
const MAX_DEPTH: u16 = 512;

impl<'s> Check<'s> {
    fn node(&self) -> &'s Node {
        &self.schema.nodes[self.id]
    }

    fn at(&self, id: Id) -> Check<'s> {
        Check { schema: self.schema, id, top: false, field: false, depth: self.depth + 1 }
    }

    fn field_at(&self, id: Id) -> Check<'s> {
        Check { field: self.top, ..self.at(id) }
    }

    fn kind<E: de::Error>(&self, kind: Kind) -> Result<(), E> {
        let types = self.node().types;
        let allowed = types & kind as u8 != 0
            // An integer is a number.
            || (matches!(kind, Kind::Integer) && types & Kind::Number as u8 != 0);
        if allowed { Ok(()) } else { Err(E::custom(Refused)) }
    }

    fn literal<E: de::Error>(&self, found: impl Fn(&Literal) -> bool) -> Result<(), E> {
        match &self.node().one_of_values {
            Some(values) if !values.iter().any(found) => Err(E::custom(Refused)),
            _ => Ok(()),
        }
    }

    fn number<E: de::Error>(&self, value: f64, integral: bool) -> Result<(), E> {
        self.kind(if integral { Kind::Integer } else { Kind::Number })?;
        self.literal(|_| false)?;
        let node = self.node();
        let above = node.min.is_none_or(|b| if b.exclusive { value > b.value } else { value >= b.value });
        let below = node.max.is_none_or(|b| if b.exclusive { value < b.value } else { value <= b.value });
        if above && below { Ok(()) } else { Err(E::custom(Refused)) }
    }

    /// A value of a [`Node::number_text`] node, from its text (which serde_json has checked is
    /// JSON): a number of at most 15 integral digits and no exponent is below 2^53, so no
    /// conversion can round it past a bound or out of being integral; any other is converted.
    fn number_text<E: de::Error>(self, text: &str) -> Result<bool, E> {
        if text == "null" && self.field {
            return Ok(true);
        }
        let digits = text.strip_prefix('-').unwrap_or(text);
        if !digits.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(E::custom(Refused));
        }
        let whole = digits.bytes().take_while(u8::is_ascii_digit).count();
        let rest = &digits[whole..];
        if whole > 15 || rest.contains(['e', 'E']) {
            let schema = self.schema;
            let plain = schema.read(Check { depth: self.depth + 1, ..self }, text, true);
            return plain.ok_or_else(|| E::custom(Refused));
        }
        // `1.0` is an integer, as to `jsonschema`; `1.000…01` (a float of 1.0) is left to it.
        let integral = rest.strip_prefix('.').is_none_or(|fraction| fraction.bytes().all(|b| b == b'0'));
        self.kind(if integral { Kind::Integer } else { Kind::Number })?;
        Ok(false)
    }

    fn integer<E: de::Error>(&self, value: i128) -> Result<(), E> {
        // Bounds are below 2^53 (see `bound`): beyond, the value is past them whatever rounding.
        let as_float = value.clamp(-(EXACT as i128) * 2, EXACT as i128 * 2) as f64;
        self.number(as_float, true)
    }
}

impl<'de> DeserializeSeed<'de> for Check<'_> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<bool, D::Error> {
        let node = self.node();
        if node.never {
            // Nothing is valid here — but a top-level field given as `null` is left out.
            let is_null = self.field && <&RawValue>::deserialize(de)?.get() == "null";
            return if is_null { Ok(true) } else { Err(de::Error::custom(Refused)) };
        }
        if node.number_text {
            return self.number_text(<&RawValue>::deserialize(de)?.get());
        }
        if node.all_of.is_empty() && node.any_of.is_empty() && node.one_of.is_empty() {
            return de.deserialize_any(self);
        }
        // Combinators: the value's own text, read once by this node and once by each branch.
        let text = <&RawValue>::deserialize(de)?.get();
        if self.field && text == "null" {
            return Ok(true);
        }
        let (schema, top, depth) = (self.schema, self.top, self.depth + 1);
        let holds =
            |id: Id| schema.read(Check { schema, id, top, field: false, depth }, text, false).is_some();
        let valid =
            schema.read(Check { schema, id: self.id, top, field: false, depth }, text, true).is_some()
                && node.all_of.iter().all(|&id| holds(id))
                && (node.any_of.is_empty() || node.any_of.iter().any(|&id| holds(id)))
                && (node.one_of.is_empty() || node.one_of.iter().filter(|&&id| holds(id)).count() == 1);
        if valid { Ok(false) } else { Err(de::Error::custom(Refused)) }
    }
}

/// An object key, borrowed from the text unless it has escapes.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        de.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }
}

impl<'de> Visitor<'de> for Check<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("params valid against the tool's schema")
    }

    fn visit_unit<E: de::Error>(self) -> Result<bool, E> {
        if self.field {
            return Ok(true);
        }
        if self.top {
            // A document that is `null` is not an object: `jsonschema` decides.
            return Err(E::custom(Refused));
        }
        self.kind(Kind::Null)?;
        self.literal(|l| *l == Literal::Null)?;
        Ok(true)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<bool, E> {
        self.kind(Kind::Bool)?;
        self.literal(|l| *l == Literal::Bool(v))?;
        Ok(false)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<bool, E> {
        self.integer(v.into()).map(|()| false)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<bool, E> {
        self.integer(v.into()).map(|()| false)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<bool, E> {
        // `1.0` is an integer to `jsonschema` as to the specification; beyond 2^53 a float is
        // refused here and decided there.
        if v.abs() >= EXACT {
            return Err(E::custom(Refused));
        }
        self.number(v, v.fract() == 0.0).map(|()| false)
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<bool, E> {
        self.visit_str(v)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<bool, E> {
        self.kind(Kind::String)?;
        self.literal(|l| matches!(l, Literal::Str(s) if s == v))?;
        let node = self.node();
        if node.min_length.is_some() || node.max_length.is_some() {
            let chars = v.chars().count() as u64;
            if node.min_length.is_some_and(|m| chars < m) || node.max_length.is_some_and(|m| chars > m) {
                return Err(E::custom(Refused));
            }
        }
        Ok(false)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        self.kind(Kind::Array)?;
        self.literal(|_| false)?;
        let node = self.node();
        let mut count = 0u64;
        // Items of any schema are read too, not skipped: serde_json skips a number it cannot
        // read (`1e400`) that it refuses in a document.
        let items = node.items.unwrap_or(ANY_NODE);
        while seq.next_element_seed(self.at(items))?.is_some() {
            count += 1;
        }
        if node.min_items.is_some_and(|m| count < m) || node.max_items.is_some_and(|m| count > m) {
            return Err(de::Error::custom(Refused));
        }
        Ok(false)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        self.kind(Kind::Object)?;
        self.literal(|_| false)?;
        let node = self.node();
        // Names given (also as `null`) and names given a value, by their index.
        let (mut given, mut valued) = (0u64, 0u64);
        while let Some(key) = map.next_key_seed(Key)? {
            let fingerprint = fingerprint(&key);
            let known =
                node.names.iter().position(|n| n.key == fingerprint && (key.len() <= 7 || n.name == key));
            let schema = known.and_then(|i| node.names[i].schema).or(node.additional);
            let is_null = map.next_value_seed(self.field_at(schema.unwrap_or(ANY_NODE)))?;
            if let Some(index) = known {
                // A name given twice is its last value alone to serde_json: `jsonschema` decides.
                if given & (1 << index) != 0 {
                    return Err(de::Error::custom(Refused));
                }
                given |= 1 << index;
                valued |= u64::from(!is_null) << index;
            }
        }
        let missing = node.names.iter().enumerate().any(|(i, n)| n.required && valued & (1 << i) == 0);
        if missing { Err(de::Error::custom(Refused)) } else { Ok(false) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn compiled(schema: Value) -> Compiled {
        Compiled::compile(&schema).expect("compiles")
    }

    #[test]
    fn reads_the_sdks_keywords() {
        let s = compiled(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "amount": {"type": "string", "minLength": 1},
                "fee": {"type": "integer", "format": "uint32", "minimum": 0, "maximum": 1000000},
                "side": {"type": "string", "enum": ["buy", "sell"]},
                "orders": {"type": "array", "items": {"$ref": "#/$defs/Order"}, "maxItems": 2},
            },
            "required": ["amount"],
            "additionalProperties": false,
            "$defs": {"Order": {"type": "object", "properties": {"price": {"type": "number"}}, "required": ["price"]}}
        }));
        assert!(s.accepts(r#"{"amount":"5","fee":3000,"side":"buy","orders":[{"price":1.5}]}"#));
        assert!(s.accepts(r#"{"amount":"5","fee":3000.0}"#), "1.0 is an integer");
        assert!(s.accepts(r#"{"amount":"5","fee":null}"#), "a null field is left out");
        assert!(!s.accepts(r#"{"amount":null}"#), "required, given as null");
        assert!(!s.accepts(r#"{"amount":""}"#));
        assert!(!s.accepts(r#"{"amount":"5","fee":-1}"#));
        assert!(!s.accepts(r#"{"amount":"5","fee":1.5}"#));
        assert!(!s.accepts(r#"{"amount":"5","side":"hold"}"#));
        assert!(!s.accepts(r#"{"amount":"5","orders":[{}]}"#));
        assert!(!s.accepts(r#"{"amount":"5","orders":[{"price":1},{"price":2},{"price":3}]}"#));
        assert!(!s.accepts(r#"{"amount":"5","extra":1}"#));
        assert!(!s.accepts(r#"{"amount":"5"} trailing"#));
        assert!(!s.accepts(r#"{"amount":"5","amount":null}"#), "given twice: the last is left out");
        assert!(!s.accepts(r#"{"amount":"5","orders":[{"price":1,"x":[1e400]}]}"#), "not JSON to serde_json");
        assert!(!s.accepts("null"));
    }

    #[test]
    fn a_number_is_read_from_its_text() {
        let s = compiled(json!({
            "type": "object",
            "properties": {"x": {"type": "number"}, "n": {"type": "integer"}},
            "required": ["x"]
        }));
        for ok in [
            r#"{"x":1.1428571428571428}"#,
            r#"{"x":-0.5,"n":3000.000}"#,
            r#"{"x":1e3,"n":2e3}"#,
            r#"{"x":123456789012345678,"n":-9007199254740991}"#,
            r#"{"x":0,"n":null}"#,
        ] {
            assert!(s.accepts(ok), "{ok}");
        }
        for refused in [
            r#"{"x":"1"}"#,
            r#"{"x":null}"#,
            r#"{"x":[1]}"#,
            r#"{"x":1,"n":1.5}"#,
            r#"{"x":1,"n":1.5e0}"#,
            r#"{"x":01}"#,
            r#"{"x":1.}"#,
            r#"{"x":9007199254740993.5}"#,
            r#"{"x":1e400}"#,
        ] {
            assert!(!s.accepts(refused), "{refused}");
        }
    }

    #[test]
    fn names_sharing_seven_bytes_are_told_apart() {
        let s = compiled(json!({
            "type": "object",
            "properties": {"position_a": {"type": "string"}, "position_b": {"type": "integer"}, "pos": {"type": "boolean"}},
            "additionalProperties": false
        }));
        assert!(s.accepts(r#"{"position_a":"x","position_b":1,"pos":true}"#));
        assert!(!s.accepts(r#"{"position_a":1}"#));
        assert!(!s.accepts(r#"{"position_b":"x"}"#));
        assert!(!s.accepts(r#"{"position_c":"x"}"#));
        assert!(!s.accepts(r#"{"posi":true}"#));
        assert!(s.accepts(r#"{"po\u0073":true}"#), "an escaped key is its text");
    }

    #[test]
    fn combinators_read_each_branch() {
        let s = compiled(json!({
            "type": "object",
            "properties": {"to": {"oneOf": [{"type": "string"}, {"type": "integer"}, {"type": "number"}]}},
            "anyOf": [{"required": ["to"], "properties": {"to": true}}, {"properties": {}, "additionalProperties": false}]
        }));
        assert!(s.accepts(r#"{"to":"x"}"#));
        assert!(!s.accepts(r#"{"to":5}"#), "an integer is a number too: two branches hold");
        assert!(s.accepts(r#"{"to":5.5}"#));
        assert!(s.accepts("{}"));
    }

    #[test]
    fn a_reference_is_its_target_and_a_loop_ends() {
        let s = compiled(json!({
            "type": "object",
            "properties": {"next": {"$ref": "#/$defs/Node"}},
            "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}, "v": {"type": "integer"}}}}
        }));
        assert!(s.accepts(r#"{"next":{"v":1,"next":{"v":2}}}"#));
        assert!(!s.accepts(r#"{"next":{"v":1,"next":{"v":"2"}}}"#));
        // Refers to itself and reads nothing deeper: refused (for `jsonschema` to decide), not
        // followed for ever.
        assert!(!compiled(json!({"$ref": "#"})).accepts("{}"));
    }

    #[test]
    fn what_it_does_not_read_is_not_compiled() {
        for schema in [
            json!({"type": "string", "pattern": "^0x"}),
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}),
            json!({"$ref": "https://example.com/x.json"}),
            json!({"enum": [1, 2]}),
            json!({"unevaluatedProperties": false}),
        ] {
            assert!(Compiled::compile(&schema).is_none(), "{schema}");
        }
    }
}
