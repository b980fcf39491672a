"""Where an update enters: polling or webhook, receipt, filters, budgets, inbox, ordering."""
