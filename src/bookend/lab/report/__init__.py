"""(docstring written below)"""
