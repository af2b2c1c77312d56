"""About: differential privacy in plain language (placeholder, being written under issue 2)."""
import streamlit as st

st.title("What differential privacy does to an income statistic")
st.write("Pick a page on the left.")
