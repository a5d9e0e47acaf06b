"""Task data: one shared feature-file layer (`features`) and a package per task."""
