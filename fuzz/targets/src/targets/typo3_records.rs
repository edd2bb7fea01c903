//! The TYPO3 records exchange: each record to the Markdown the mirror indexes.

use concierge_trips::content::feed::RecordsResponse;
use concierge_trips::content::markdown::{faq_markdown, record_markdown};

pub fn run(data: &[u8]) {
    let Ok(response) = serde_json::from_slice::<RecordsResponse>(data) else {
        return;
    };
    for record in &response.records {
        let _ = record_markdown(&record.kind, &record.data);
        let _ = faq_markdown(&record.data);
    }
}
