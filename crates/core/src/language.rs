/// The language an app's users and model read. The platform writes its own model-facing messages
/// (argument validation, rate limits) in it, so a Russian shop's bot does not relay English.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Language {
    #[default]
    English,
    Russian,
    Chinese,
    German,
}
