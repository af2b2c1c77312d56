"""Placeholder page (gini): replaced when its issue lands."""
import streamlit as st

st.title("gini")
st.info("This page is being built. It will show what differential privacy does to this statistic.")
