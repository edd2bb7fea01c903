//! The texts the platform writes for a model and the people behind it: argument validation, rate
//! limits, write safety, scopes, deadlines. A [`ToolSet`] names the table its users read, so a
//! Russian coffee shop's bot never relays English and a Vietnamese agency reads Vietnamese.
//!
//! A table is plain data: a new language is a new `const` (here, or in the app that needs it,
//! starting from [`ENGLISH`] with struct update syntax), never a new branch in the platform.
//! Templates name their values in braces (`{seconds}`); [`render`] fills them.
//!
//! [`ToolSet`]: crate::ToolSet

/// One language's platform texts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Messages {
    /// The language's code (BCP 47 primary tag), as configs name it (`language = "zh"`).
    pub code: &'static str,
    // Argument validation: each phrase is followed by the limit, the value or the list.
    pub required: &'static str,
    pub unknown_argument: &'static str,
    /// An argument the platform fills in (from the caller, or fixed by the config), passed by
    /// the model.
    pub argument_not_allowed: &'static str,
    /// What "allowed:" lists for a tool that takes no arguments.
    pub no_arguments: &'static str,
    pub wrong_type: &'static str,
    pub type_names: TypeNames,
    pub below_minimum: &'static str,
    pub above_maximum: &'static str,
    pub min_items: &'static str,
    pub max_items: &'static str,
    pub min_length: &'static str,
    pub max_length: &'static str,
    pub not_one_of: &'static str,
    /// `{limit}` (`60/minute`), `{policy}` (one of the two below), `{seconds}`.
    pub rate_limited: &'static str,
    pub sliding_window: &'static str,
    pub token_bucket: &'static str,
    // Write safety.
    pub key_missing: &'static str,
    pub key_reused: &'static str,
    pub write_in_progress: &'static str,
    pub confirm_first: &'static str,
    pub confirm_token_expired: &'static str,
    pub confirm_token_invalid: &'static str,
    /// The confirmation form's first words, before the tool's name and its preview (MRTR).
    pub confirm_prompt: &'static str,
    /// The confirmation form's one box.
    pub confirm_label: &'static str,
    /// The user declined the form: nothing was written.
    pub confirmation_declined: &'static str,
    /// A `requestState` that is forged, damaged or belongs to another call.
    pub request_state_invalid: &'static str,
    pub request_state_expired: &'static str,
    /// A `requestState` that was already handed back once.
    pub request_state_used: &'static str,
    /// `{scopes}`: the scopes the token lacks.
    pub missing_scopes: &'static str,
    /// `{tool}`, `{seconds}`: the platform's call deadline passed.
    pub deadline_exceeded: &'static str,
    /// `{seconds}`: a shared store (Redis, PostgreSQL) the call needs is down; nothing was done.
    pub state_unavailable: &'static str,
}

/// JSON Schema's type names as a reader of the language knows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TypeNames {
    pub integer: &'static str,
    pub number: &'static str,
    pub string: &'static str,
    pub array: &'static str,
    pub object: &'static str,
    pub boolean: &'static str,
}

impl TypeNames {
    /// The name of JSON Schema type `name`; an unknown one as it is.
    pub fn of<'a>(&self, name: &'a str) -> &'a str {
        match name {
            "integer" => self.integer,
            "number" => self.number,
            "string" => self.string,
            "array" => self.array,
            "object" => self.object,
            "boolean" => self.boolean,
            other => other,
        }
    }
}

/// Fills `{name}` in `template` with each value; names not given stay as written.
pub fn render(template: &str, values: &[(&str, &dyn std::fmt::Display)]) -> String {
    let mut out = template.to_string();
    for (name, value) in values {
        out = out.replace(&format!("{{{name}}}"), &value.to_string());
    }
    out
}

/// The tables this catalog has, by code: what a config's `language = "…"` may name.
pub const CATALOG: &[&Messages] = &[&ENGLISH, &RUSSIAN, &CHINESE, &GERMAN, &VIETNAMESE];

/// The table for `code` (`en`, `ru`, `zh`, `de`, `vi`).
pub fn by_code(code: &str) -> Option<&'static Messages> {
    CATALOG.iter().copied().find(|m| m.code == code)
}

/// The table a section's `language` names (English when it names none), or what is allowed.
pub fn for_language(language: Option<&str>) -> Result<&'static Messages, String> {
    let code = language.unwrap_or("en");
    by_code(code).ok_or_else(|| {
        let known: Vec<&str> = CATALOG.iter().map(|m| m.code).collect();
        format!("language `{code}` is not one of {}", known.join(", "))
    })
}

pub const ENGLISH: Messages = Messages {
    code: "en",
    required: "required, but missing",
    unknown_argument: "unknown argument; allowed:",
    argument_not_allowed: "is set by the server (from who is calling, or by its configuration) and cannot be passed as an argument",
    no_arguments: "none",
    wrong_type: "wrong type, expected",
    type_names: TypeNames {
        integer: "integer",
        number: "number",
        string: "string",
        array: "array",
        object: "object",
        boolean: "boolean",
    },
    below_minimum: "less than the minimum of",
    above_maximum: "greater than the maximum of",
    min_items: "needs at least this many items:",
    max_items: "allows at most this many items:",
    min_length: "needs at least this many characters:",
    max_length: "allows at most this many characters:",
    not_one_of: "not one of",
    rate_limited: "Rate limit for this client reached ({limit}, {policy}). Retry in {seconds} s.",
    sliding_window: "sliding window",
    token_bucket: "token bucket",
    key_missing: "Writes need an idempotency_key: a key you choose for this one change (a UUID, say).",
    key_reused: "This idempotency_key was already used with other arguments. Use a new key for a new change.",
    write_in_progress: "A write with this idempotency_key is still running. Send the same call again in a moment.",
    confirm_first: "Nothing was changed. Show the preview to the user; once they agree, call again with the same arguments and confirm_token.",
    confirm_token_expired: "The confirm_token has expired. Call without confirm_token to get a new preview and token.",
    confirm_token_invalid: "The confirm_token does not belong to this call (other arguments, tool or user). Call without confirm_token to get a new one.",
    confirm_prompt: "Confirm this change?",
    confirm_label: "Yes, make this change",
    confirmation_declined: "Nothing was changed: the user did not confirm.",
    request_state_invalid: "The requestState does not belong to this call (other arguments, tool or user). Call again without it to be asked anew.",
    request_state_expired: "The requestState has expired. Call again without it to be asked anew.",
    request_state_used: "This requestState was already used. Call again without it to be asked anew.",
    missing_scopes: "this tool needs the scope(s) {scopes}; the access token was not granted them — sign in again and allow them",
    deadline_exceeded: "`{tool}` did not answer within {seconds} s and was stopped. Try again later; a write with an idempotency_key can be sent again with the same key.",
    state_unavailable: "A shared store this call needs is unavailable right now; nothing was done. Retry in {seconds} s (a write with the same idempotency_key).",
};

pub const RUSSIAN: Messages = Messages {
    code: "ru",
    required: "обязательное поле не указано",
    unknown_argument: "неизвестный аргумент; допустимы:",
    argument_not_allowed: "задаётся сервером (по тому, кто вызывает, или его настройками) и не может быть передан как аргумент",
    no_arguments: "аргументов нет",
    wrong_type: "неверный тип, нужен тип",
    type_names: TypeNames {
        integer: "целое число",
        number: "число",
        string: "строка",
        array: "список",
        object: "объект",
        boolean: "true или false",
    },
    below_minimum: "значение меньше допустимого минимума",
    above_maximum: "значение больше допустимого максимума",
    min_items: "нужно элементов не меньше, чем",
    max_items: "допустимо элементов не больше, чем",
    min_length: "нужно символов не меньше, чем",
    max_length: "допустимо символов не больше, чем",
    not_one_of: "значение не из списка:",
    rate_limited: "Превышен лимит вызовов для этого клиента ({limit}, {policy}). Повторите через {seconds} с.",
    sliding_window: "скользящее окно",
    token_bucket: "корзина с пополнением",
    key_missing: "Нужен idempotency_key: ключ этого изменения (например, UUID).",
    key_reused: "Этот idempotency_key уже использован с другими аргументами. Для нового изменения нужен новый ключ.",
    write_in_progress: "Запись с этим idempotency_key ещё выполняется. Повторите тот же вызов чуть позже.",
    confirm_first: "Ничего не изменено. Покажите пользователю preview; после его согласия вызовите инструмент снова с теми же аргументами и confirm_token.",
    confirm_token_expired: "Срок confirm_token истёк. Вызовите инструмент без confirm_token, чтобы получить новый preview.",
    confirm_token_invalid: "confirm_token не подходит к этому вызову (другие аргументы, инструмент или пользователь). Вызовите без confirm_token, чтобы получить новый.",
    confirm_prompt: "Подтвердить это изменение?",
    confirm_label: "Да, выполнить",
    confirmation_declined: "Ничего не изменено: пользователь не подтвердил.",
    request_state_invalid: "requestState не подходит к этому вызову (другие аргументы, инструмент или пользователь). Вызовите снова без него, чтобы спросить заново.",
    request_state_expired: "Срок requestState истёк. Вызовите снова без него, чтобы спросить заново.",
    request_state_used: "Этот requestState уже использован. Вызовите снова без него, чтобы спросить заново.",
    missing_scopes: "Этому инструменту нужны права {scopes}; токен доступа их не получил — войдите снова и разрешите их.",
    deadline_exceeded: "`{tool}` не ответил за {seconds} с, вызов остановлен. Повторите позже; запись с idempotency_key можно отправить снова с тем же ключом.",
    state_unavailable: "Общее хранилище, нужное для этого вызова, сейчас недоступно; ничего не сделано. Повторите через {seconds} с (запись — с тем же idempotency_key).",
};

pub const CHINESE: Messages = Messages {
    code: "zh",
    required: "缺少必填参数",
    unknown_argument: "未知参数；允许的参数：",
    argument_not_allowed: "由服务器设定（根据调用方身份或服务器配置），不能作为参数传入",
    no_arguments: "无",
    wrong_type: "类型错误，应为",
    type_names: TypeNames {
        integer: "整数",
        number: "数字",
        string: "字符串",
        array: "数组",
        object: "对象",
        boolean: "布尔值",
    },
    below_minimum: "小于允许的最小值",
    above_maximum: "大于允许的最大值",
    min_items: "元素数量至少为",
    max_items: "元素数量至多为",
    min_length: "字符数至少为",
    max_length: "字符数至多为",
    not_one_of: "不在允许的取值中：",
    rate_limited: "该客户端的调用次数已超过限制（{limit}，{policy}），请在 {seconds} 秒后重试。",
    sliding_window: "滑动窗口",
    token_bucket: "令牌桶",
    key_missing: "写操作必须提供 idempotency_key（例如一个 UUID）。",
    key_reused: "该 idempotency_key 已用于不同的参数；新的修改请使用新的 key。",
    write_in_progress: "使用该 idempotency_key 的写操作仍在执行，请稍后用相同参数重试。",
    confirm_first: "尚未修改任何内容。请向用户展示 preview，用户同意后用相同参数和 confirm_token 再次调用。",
    confirm_token_expired: "confirm_token 已过期。请不带 confirm_token 再次调用以获取新的预览。",
    confirm_token_invalid: "confirm_token 与本次调用不符（参数、工具或用户不同）。请不带 confirm_token 调用以获取新的。",
    confirm_prompt: "确认此项修改吗？",
    confirm_label: "是，执行修改",
    confirmation_declined: "尚未修改任何内容：用户没有确认。",
    request_state_invalid: "requestState 与本次调用不符（参数、工具或用户不同）。请不带它再次调用以重新询问。",
    request_state_expired: "requestState 已过期。请不带它再次调用以重新询问。",
    request_state_used: "此 requestState 已被使用。请不带它再次调用以重新询问。",
    missing_scopes: "该工具需要权限 {scopes}；访问令牌未获授予——请重新登录并允许这些权限。",
    deadline_exceeded: "`{tool}` 在 {seconds} 秒内未响应，调用已停止。请稍后重试；带 idempotency_key 的写操作可用同一 key 再次发送。",
    state_unavailable: "此调用所需的共享存储暂时不可用，未做任何操作。请在 {seconds} 秒后重试（写操作请使用同一 idempotency_key）。",
};

pub const GERMAN: Messages = Messages {
    code: "de",
    required: "Pflichtangabe fehlt",
    unknown_argument: "unbekanntes Argument; erlaubt:",
    argument_not_allowed: "wird vom Server gesetzt (aus dem Aufrufer oder seiner Konfiguration) und kann nicht als Argument übergeben werden",
    no_arguments: "keine",
    wrong_type: "falscher Typ, erwartet:",
    type_names: TypeNames {
        integer: "ganze Zahl",
        number: "Zahl",
        string: "Text",
        array: "Liste",
        object: "Objekt",
        boolean: "true oder false",
    },
    below_minimum: "kleiner als das Minimum",
    above_maximum: "größer als das Maximum",
    min_items: "mindestens so viele Einträge:",
    max_items: "höchstens so viele Einträge:",
    min_length: "mindestens so viele Zeichen:",
    max_length: "höchstens so viele Zeichen:",
    not_one_of: "nicht erlaubt; erlaubt:",
    rate_limited: "Aufruflimit für diesen Client erreicht ({limit}, {policy}). Bitte in {seconds} s erneut versuchen.",
    sliding_window: "gleitendes Fenster",
    token_bucket: "Token-Bucket",
    key_missing: "Schreibende Aufrufe brauchen einen idempotency_key (z. B. eine UUID).",
    key_reused: "Dieser idempotency_key wurde schon mit anderen Argumenten benutzt; für eine neue Änderung einen neuen Schlüssel wählen.",
    write_in_progress: "Ein Aufruf mit diesem idempotency_key läuft noch; gleich mit denselben Argumenten wiederholen.",
    confirm_first: "Nichts geändert. Zeige dem Nutzer die Vorschau (preview); wenn er zustimmt, rufe das Tool mit denselben Argumenten und confirm_token erneut auf.",
    confirm_token_expired: "Der confirm_token ist abgelaufen. Ohne confirm_token aufrufen, um eine neue Vorschau zu bekommen.",
    confirm_token_invalid: "Der confirm_token passt nicht zu diesem Aufruf (andere Argumente, anderes Tool oder anderer Nutzer). Ohne confirm_token aufrufen, um einen neuen zu bekommen.",
    confirm_prompt: "Diese Änderung bestätigen?",
    confirm_label: "Ja, Änderung ausführen",
    confirmation_declined: "Nichts geändert: Der Nutzer hat nicht bestätigt.",
    request_state_invalid: "Der requestState passt nicht zu diesem Aufruf (andere Argumente, anderes Tool oder anderer Nutzer). Ohne ihn erneut aufrufen, um neu zu fragen.",
    request_state_expired: "Der requestState ist abgelaufen. Ohne ihn erneut aufrufen, um neu zu fragen.",
    request_state_used: "Dieser requestState wurde schon verwendet. Ohne ihn erneut aufrufen, um neu zu fragen.",
    missing_scopes: "Dieses Tool braucht die Berechtigung(en) {scopes}; das Zugriffstoken hat sie nicht — neu anmelden und sie erlauben.",
    deadline_exceeded: "`{tool}` hat nicht binnen {seconds} s geantwortet und wurde abgebrochen. Später erneut versuchen; ein Schreibaufruf mit idempotency_key darf mit demselben Schlüssel wiederholt werden.",
    state_unavailable: "Ein gemeinsamer Speicher, den dieser Aufruf braucht, ist gerade nicht erreichbar; es wurde nichts getan. Bitte in {seconds} s erneut versuchen (ein Schreibaufruf mit demselben idempotency_key).",
};

/// Mappy's seed is Vietnamese; its identifiers and codes stay English (seed §7).
pub const VIETNAMESE: Messages = Messages {
    code: "vi",
    required: "bắt buộc nhưng chưa có",
    unknown_argument: "tham số không xác định; được phép:",
    argument_not_allowed: "do máy chủ đặt (theo người gọi hoặc theo cấu hình), không thể truyền làm tham số (set by the server)",
    no_arguments: "không có",
    wrong_type: "sai kiểu, cần",
    type_names: TypeNames {
        integer: "số nguyên",
        number: "số",
        string: "chuỗi",
        array: "danh sách",
        object: "đối tượng",
        boolean: "true hoặc false",
    },
    below_minimum: "nhỏ hơn giá trị tối thiểu",
    above_maximum: "lớn hơn giá trị tối đa",
    min_items: "cần ít nhất số phần tử:",
    max_items: "cho phép nhiều nhất số phần tử:",
    min_length: "cần ít nhất số ký tự:",
    max_length: "cho phép nhiều nhất số ký tự:",
    not_one_of: "không thuộc danh sách",
    rate_limited: "Client này đã vượt giới hạn gọi ({limit}, {policy}). Thử lại sau {seconds} giây.",
    sliding_window: "cửa sổ trượt",
    token_bucket: "token bucket",
    key_missing: "Thao tác ghi cần idempotency_key: một khóa bạn chọn cho đúng thay đổi này (ví dụ một UUID).",
    key_reused: "idempotency_key này đã được dùng với tham số khác. Hãy dùng khóa mới cho thay đổi mới.",
    write_in_progress: "Thao tác ghi với idempotency_key này vẫn đang chạy. Gửi lại đúng lệnh gọi đó sau giây lát.",
    confirm_first: "Chưa thay đổi gì. Hãy cho người dùng xem preview; khi họ đồng ý, gọi lại với cùng tham số và confirm_token.",
    confirm_token_expired: "confirm_token đã hết hạn. Gọi lại không kèm confirm_token để nhận preview và token mới.",
    confirm_token_invalid: "confirm_token không khớp với lệnh gọi này (khác tham số, công cụ hoặc người dùng). Gọi lại không kèm confirm_token để nhận token mới.",
    confirm_prompt: "Xác nhận thay đổi này? (Confirm this change?)",
    confirm_label: "Có, thực hiện thay đổi",
    confirmation_declined: "Chưa thay đổi gì: người dùng chưa xác nhận.",
    request_state_invalid: "requestState không khớp với lệnh gọi này (khác tham số, công cụ hoặc người dùng). Gọi lại không kèm nó để hỏi lại.",
    request_state_expired: "requestState đã hết hạn. Gọi lại không kèm nó để hỏi lại.",
    request_state_used: "requestState này đã được dùng. Gọi lại không kèm nó để hỏi lại.",
    missing_scopes: "Công cụ này cần quyền {scopes}; access token chưa được cấp các quyền đó — hãy đăng nhập lại và cho phép.",
    deadline_exceeded: "`{tool}` không trả lời trong {seconds} giây nên đã bị dừng. Thử lại sau; thao tác ghi có idempotency_key có thể gửi lại với cùng khóa.",
    state_unavailable: "Kho dữ liệu dùng chung mà lệnh gọi này cần hiện không khả dụng; chưa có gì được thực hiện. Thử lại sau {seconds} giây (thao tác ghi dùng cùng idempotency_key).",
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_fills_the_same_templates() {
        for table in CATALOG {
            assert_eq!(by_code(table.code), Some(*table));
            for template in [table.rate_limited] {
                for name in ["{limit}", "{policy}", "{seconds}"] {
                    assert!(template.contains(name), "{}: {name}", table.code);
                }
            }
            assert!(table.missing_scopes.contains("{scopes}"), "{}", table.code);
            for name in ["{tool}", "{seconds}"] {
                assert!(table.deadline_exceeded.contains(name), "{}", table.code);
            }
        }
        assert_eq!(by_code("xx"), None);
    }

    #[test]
    fn render_fills_named_values() {
        let text = render(
            ENGLISH.rate_limited,
            &[
                ("limit", &"2/minute"),
                ("policy", &ENGLISH.sliding_window),
                ("seconds", &7),
            ],
        );
        assert_eq!(
            text,
            "Rate limit for this client reached (2/minute, sliding window). Retry in 7 s."
        );
    }
}
