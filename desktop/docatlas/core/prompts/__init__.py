"""Layer 4: prompts. The shipped profiles and templates (`catalog`), the user's saved
prompts and versions (`store`), and the import of other tools' prompt files (`importer`)."""
