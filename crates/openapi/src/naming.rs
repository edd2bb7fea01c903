//! What an operation is called here: its `operationId` (or method and path) as a tool name.

/// `listInvoices` → `list_invoices`, `repos/get-content` → `repos_get_content`.
pub fn snake_case(id: &str) -> String {
    let mut out = String::with_capacity(id.len() + 4);
    let mut previous: Option<char> = None;
    for c in id.chars() {
        if c.is_ascii_alphanumeric() {
            if c.is_ascii_uppercase()
                && previous.is_some_and(|p| p.is_ascii_lowercase() || p.is_ascii_digit())
            {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
        previous = Some(c);
    }
    out.trim_end_matches('_').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operation_ids_become_snake_case() {
        assert_eq!(snake_case("listInvoices"), "list_invoices");
        assert_eq!(snake_case("repos/get-content"), "repos_get_content");
        assert_eq!(snake_case("getV2Users"), "get_v2_users");
        assert_eq!(snake_case("get /pets/{petId}"), "get_pets_pet_id");
    }
}
