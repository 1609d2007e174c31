//! How large the prompt and its parts may grow.

/// Size limits, in characters.
#[derive(Clone, Debug)]
pub struct PromptLimits {
    /// One persona file or the orchestrator.
    pub max_document_chars: usize,
    /// Entries listed per index (functions, processes, knowledge, state).
    pub max_index_entries: usize,
    /// One name, description or operation in an index.
    pub max_entry_chars: usize,
    /// Operations listed in the approval policy.
    pub max_operations: usize,
    /// The whole prompt. The approval policy and the instructions are never cut; the other sections
    /// share what is left.
    pub max_total_chars: usize,
}

impl Default for PromptLimits {
    fn default() -> Self {
        PromptLimits {
            max_document_chars: 16_000,
            max_index_entries: 100,
            max_entry_chars: 240,
            max_operations: 200,
            max_total_chars: 64_000,
        }
    }
}
